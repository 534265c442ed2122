// Package registrytest has fakes for the tests of the REST storages: a
// resolver answering from a map. MachineDeployments and their lister are in
// machinecontroller/machinecontrollertest.
package registrytest

import (
	"context"
	"errors"
	"sync/atomic"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// Resolver renders every MD the same way, except those named in Errors, and
// counts its calls.
type Resolver struct {
	Errors map[string]error // by MD name
	Calls  atomic.Int64
}

var _ resolve.Interface = &Resolver{}

// Resolve implements resolve.Interface.
func (r *Resolver) Resolve(_ context.Context, md *clusterv1alpha1.MachineDeployment) *resolve.Rendered {
	r.Calls.Add(1)
	profile := osm.ProfileReference{Namespace: "kube-system", Name: md.Annotations[machinecontroller.AnnotationOSP], Version: "v1.0.0"}
	if err := r.Errors[md.Name]; err != nil {
		return resolve.NewFailed(profile, nil, err)
	}
	cfg := &osm.OperatingSystemConfigSpec{
		OSName: "ubuntu", OSVersion: "24.04", ProvisioningUtility: "cloud-init",
		CloudProvider: osm.CloudProviderSpec{Name: "aws"},
	}
	out, err := rendered(profile, cfg, "#cloud-config\nbootstrap: "+md.Name+"\n", string(make([]byte, 20000)))
	if err == nil && machinecontroller.CloudProvider(md) == machinecontroller.CloudProviderEdge {
		out.EdgeScript, err = resolve.NewPayload(osm.PayloadFormatShell, []byte("#!/bin/bash\n# join "+md.Name+"\n"))
	}
	if err != nil {
		return resolve.NewFailed(profile, nil, err)
	}
	return out
}

func rendered(profile osm.ProfileReference, cfg *osm.OperatingSystemConfigSpec, bootstrap, provisioning string) (*resolve.Rendered, error) {
	b, err := resolve.NewPayload(osm.PayloadFormatCloudInit, []byte(bootstrap))
	if err != nil {
		return nil, err
	}
	p, err := resolve.NewPayload(osm.PayloadFormatCloudInit, []byte(provisioning))
	if err != nil {
		return nil, err
	}
	return resolve.NewRendered(profile, cfg, b, p)
}

// ErrBroken is a render error for tests.
var ErrBroken = errors.New("osp-broken: provisioningConfig file /opt/x: template: line 1: unclosed action")

// ErrPending is a render waiting for the syncer, for tests.
var ErrPending = &resolve.PendingError{Reason: "waiting for the syncer to create tokens"}
