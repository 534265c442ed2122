package review

import (
	"fmt"
	"io"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// WriteText writes r as a reader of a CI log wants it: what changes, one line
// each, then the diffs.
func WriteText(w io.Writer, r *osm.MachineDeploymentReview) error {
	var b strings.Builder
	what := "payloads unchanged"
	switch {
	case r.Pending != "":
		what = "not compared, pending: " + r.Pending
	case r.Error != "":
		what = "render fails, payloads unchanged: " + r.Error
	case r.Changed:
		what = "payloads change"
	}
	fmt.Fprintf(&b, "machinedeployment %s/%s: %s\n", r.Namespace, r.Name, what)
	if r.PreviousError != "" {
		fmt.Fprintf(&b, "  before: render fails: %s\n", r.PreviousError)
	}
	for _, p := range []struct {
		name string
		p    osm.PayloadReview
	}{{"bootstrap", r.Bootstrap}, {"provisioning", r.Provisioning}} {
		fmt.Fprintf(&b, "  %s payload: %d -> %d bytes", p.name, p.p.SizeBefore, p.p.SizeAfter)
		if p.p.UserDataLimit > 0 {
			fmt.Fprintf(&b, " (the cloud's user-data limit: %d", p.p.UserDataLimit)
			if p.p.OverLimit {
				b.WriteString(", EXCEEDED")
			}
			b.WriteString(")")
		}
		b.WriteString("\n")
	}
	if len(r.Overlays) > 0 {
		refs := make([]string, len(r.Overlays))
		for i, o := range r.Overlays {
			refs[i] = o.Namespace + "/" + o.Name
			if o.Generation > 0 { // offline renders read overlays from files
				refs[i] += fmt.Sprintf("@%d", o.Generation)
			}
		}
		fmt.Fprintf(&b, "  overlays: %s\n", strings.Join(refs, ", "))
	}
	kinds := []struct {
		kind  string
		items []osm.ItemReview
	}{{"file", r.Files}, {"unit", r.Units}, {"module", r.Modules}}
	for _, k := range kinds {
		for _, it := range k.items {
			fmt.Fprintf(&b, "  %s %s %s: %s\n", it.Config, k.kind, it.Name, strings.ToLower(string(it.Change)))
		}
	}
	for _, k := range kinds {
		for _, it := range k.items {
			b.WriteString("\n")
			b.WriteString(it.Diff)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary counts the reviews that change, fail and are pending.
func Summary(reviews []osm.MachineDeploymentReview) (changed, failed int32) {
	for i := range reviews {
		if reviews[i].Changed {
			changed++
		}
		if reviews[i].Error != "" {
			failed++
		}
	}
	return changed, failed
}
