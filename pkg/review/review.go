// Package review compares two renders of one MachineDeployment — as it is and
// with a candidate profile or overlay — into an osm.MachineDeploymentReview:
// whether its payloads change, which files, units and modules are added,
// removed or changed (with a unified diff of each), and the payloads' sizes
// against the cloud's user-data limit. It reads only the view of a render,
// the config whose secrets are placeholders, and the payloads' sizes and
// digests: the real payloads' for a caller who may read them, the view's
// payloads' for any other (see FromRendered), so a review shows no more
// than an OperatingSystemConfig does. The
// API's ProfileReviews and `osm-apiserver render --diff` both use it.
package review

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// Side is one render of a MachineDeployment.
type Side struct {
	// Config is the view (secrets are placeholders); nil when it failed.
	Config *osm.OperatingSystemConfigSpec
	// Payloads are the real payloads' sizes and digests.
	Bootstrap, Provisioning, EdgeScript Payload
	// Err is the view's render error, Pending what the render waits for.
	Err, Pending string
	Overlays     []osm.OverlayReference
}

// Payload is what a review reads of a payload.
type Payload struct {
	Size   int64
	SHA256 string
}

// FromRendered is the Side of a resolver's output, as a caller of audience
// a may see it. This is the one place that decides what a review shows of a
// render: for a caller who may read the payloads, their sizes and digests;
// for one who may not (resolve.ViewOnly), everything — sizes, digests,
// hence changed and overLimit, the config diffed, errors — is the view's,
// so no answer depends on a secret's value. r must then be the view-only
// preview (Resolver.Preview with resolve.ViewOnly) or a cached output,
// whose view's payloads it keeps; a cached output whose view failed is
// failed to such a caller.
func FromRendered(r *resolve.Rendered, a resolve.Audience) (Side, error) {
	s := Side{Overlays: r.Overlays}
	if reason, ok := r.Pending(); ok {
		s.Pending = reason
		return s, nil
	}
	if r.Err != nil {
		s.Err = r.Err.Error()
		return s, nil
	}
	if a == resolve.ViewOnly && r.ViewErr != nil {
		s.Err = r.ViewErr.Error()
		return s, nil
	}
	if r.ViewErr == nil {
		cfg, err := r.PeekConfig()
		if err != nil {
			return s, err
		}
		s.Config = cfg
	}
	bootstrap, provisioning, edge := r.Bootstrap, r.Provisioning, r.EdgeScript
	if a == resolve.ViewOnly {
		bootstrap, provisioning, edge = r.ViewBootstrap, r.ViewProvisioning, r.ViewEdgeScript
	}
	s.Bootstrap = Payload{Size: bootstrap.Size, SHA256: bootstrap.SHA256}
	s.Provisioning = Payload{Size: provisioning.Size, SHA256: provisioning.SHA256}
	s.EdgeScript = Payload{Size: edge.Size, SHA256: edge.SHA256}
	return s, nil
}

// Compare reviews what changes from before to after for one
// MachineDeployment; d makes the diffs (and may be shared by the reviews of
// one request, which often diff the same contents).
func Compare(before, after Side, d *Differ) osm.MachineDeploymentReview {
	r := osm.MachineDeploymentReview{
		Error:         after.Err,
		PreviousError: before.Err,
		Pending:       after.Pending,
		Overlays:      after.Overlays,
		Bootstrap:     osm.PayloadReview{SizeBefore: before.Bootstrap.Size, SizeAfter: after.Bootstrap.Size},
		Provisioning:  osm.PayloadReview{SizeBefore: before.Provisioning.Size, SizeAfter: after.Provisioning.Size},
	}
	if r.Pending == "" {
		r.Pending = before.Pending
	}
	if r.Pending != "" {
		return r
	}
	if after.Err == "" {
		// A failed render changes nothing: the Secrets stay as they are.
		r.Changed = before.Bootstrap != after.Bootstrap || before.Provisioning != after.Provisioning || before.EdgeScript != after.EdgeScript
	}
	cloud := ""
	switch {
	case after.Config != nil:
		cloud = after.Config.CloudProvider.Name
	case before.Config != nil:
		cloud = before.Config.CloudProvider.Name
	}
	if limit := machinecontroller.UserDataLimit(cloud); limit > 0 {
		r.Bootstrap.UserDataLimit = limit
		r.Bootstrap.OverLimit = after.Bootstrap.Size > limit
	}
	if before.Config == nil || after.Config == nil {
		// Nothing to compare the contents with (a failed render, or a view
		// that fails where the payloads do not).
		return r
	}
	for _, c := range []struct {
		name          string
		before, after *osm.OSCConfig
	}{
		{string(osm.PayloadTypeBootstrap), &before.Config.BootstrapConfig, &after.Config.BootstrapConfig},
		{string(osm.PayloadTypeProvisioning), &before.Config.ProvisioningConfig, &after.Config.ProvisioningConfig},
	} {
		r.Files = append(r.Files, d.items(c.name, files(c.before), files(c.after))...)
		r.Units = append(r.Units, d.items(c.name, units(c.before), units(c.after))...)
		r.Modules = append(r.Modules, d.items(c.name, modules(c.before), modules(c.after))...)
	}
	return r
}

// FromResults is the Side of an offline render (osm-apiserver render):
// real is the render with the real values, view the one from placeholders
// (render.Input.View), viewErr its error.
func FromResults(real, view *render.Result, viewErr error) Side {
	if viewErr != nil || real == nil {
		s := Side{Err: "the render fails"}
		if viewErr != nil {
			s.Err = viewErr.Error()
		}
		return s
	}
	s := Side{Config: &view.Config}
	s.Bootstrap = payload(real.Bootstrap.UserData)
	s.Provisioning = payload(real.Provisioning.UserData)
	if real.EdgeScript != nil {
		s.EdgeScript = payload(real.EdgeScript.UserData)
	}
	return s
}

func payload(data []byte) Payload {
	sum := sha256.Sum256(data)
	return Payload{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}
