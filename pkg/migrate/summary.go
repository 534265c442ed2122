package migrate

import (
	"fmt"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// sumUp sums up what upstream left, one line per kind; none when nothing.
func (p *Plan) sumUp(s *State) {
	add := func(what, format string, args ...any) {
		p.Found = append(p.Found, fmt.Sprintf("%-27s %s", what, fmt.Sprintf(format, args...)))
	}
	for _, r := range s.Running {
		add("controller", "running: %s", r)
	}
	for _, w := range s.Webhooks {
		add("webhook configuration", "%s", w)
	}
	if s.OSCCRD {
		add("OperatingSystemConfig CRD", "%s, %d objects", OSCCRD, len(s.OSCs))
	}
	if len(s.Getter) > 0 {
		add("getter token", "%s", objectNames(s.Getter))
	}
	var finalizers, upstream, credentials int
	for _, md := range s.MachineDeployments {
		if md.Finalizer {
			finalizers++
		}
		if md.upstreams() {
			upstream++
		}
		credentials += len(md.Leftovers)
	}
	if finalizers > 0 {
		add("finalizer", "%s on %s", Finalizer, count(finalizers, "MachineDeployment"))
	}
	if upstream > 0 {
		add("payload Secrets", "upstream's, of %s (osm-apiserver's syncer takes them over)", count(upstream, "MachineDeployment"))
	}
	if credentials > 0 {
		add("node credentials", "%s: upstream's kubelet bootstrap kubeconfigs and bootstrap tokens", count(credentials, "Secret"))
	}
}

// count says "1 thing" or "n things".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// note says what stays as it is: the profiles that are not osm-apiserver's,
// which MDs use them, and which MDs name none.
func (p *Plan) note(s *State) {
	if s.OSPCRDUpstream {
		p.Notes = append(p.Notes, "CustomResourceDefinition operatingsystemprofiles."+Group+" is upstream's: apply osm-apiserver's by hand "+
			"(kubectl apply --server-side -k artifacts/crd); it keeps a profile's spec immutable without a new spec.version")
	}
	for _, o := range s.Profiles {
		if o.Ours {
			continue
		}
		users := "used by no MachineDeployment"
		if len(o.Users) > 0 {
			names := make([]string, len(o.Users))
			for i, u := range o.Users {
				names[i] = u.String()
			}
			users = "used by " + limit(names, 8)
		}
		text := fmt.Sprintf("OperatingSystemProfile %s/%s (%s) is not osm-apiserver's: it stays as it is, %s", o.Namespace, o.Name, o.Version, users)
		if o.Default {
			text += "; it has the name of an osm-apiserver default, which osm-apiserver does not install while it exists " +
				"(delete it and restart osm-apiserver to have osm-apiserver's: new Machines then boot from it, existing nodes stay as they are)"
		}
		p.Notes = append(p.Notes, text)
	}
	for _, md := range s.MachineDeployments {
		switch {
		case md.ProfileErr != "":
			p.Notes = append(p.Notes, md.ProfileErr)
		case md.Profile.Defaulted:
			p.Notes = append(p.Notes, fmt.Sprintf("machinedeployment %s names no profile (%s): it renders from %s, its operating system's default",
				md.Ref, machinecontroller.AnnotationOSP, md.Profile))
		}
	}
	if !s.Machines && len(s.Getter) > 0 {
		p.Notes = append(p.Notes, "the cluster serves no Machines (cluster.k8s.io/v1alpha1): no VM can be joining with upstream's credentials")
	}
}

// Empty says there is nothing to do and nothing that blocks.
func (p *Plan) Empty() bool {
	return len(p.Steps) == 0 && len(p.Blocked) == 0
}

// String is the step's text and, for one that waits, why on the lines after.
func (s Step) String() string {
	if s.Wait == "" {
		return s.Text
	}
	return s.Text + "\n     waits: " + strings.ReplaceAll(s.Wait, "; ", ";\n            ")
}
