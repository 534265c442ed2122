// Package registrytest has fakes for the tests of the REST storages: a
// MachineDeployment lister over a slice and a renderer answering from a map.
package registrytest

import (
	"context"
	"errors"
	"sync/atomic"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinedeployments"
	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
)

// MD returns a MachineDeployment naming profile (none if empty).
func MD(namespace, name, profile string, labels map[string]string) *clusterv1alpha1.MachineDeployment {
	md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{
		Namespace: namespace, Name: name, Labels: labels,
		UID:               types.UID(namespace + "-" + name),
		ResourceVersion:   "1",
		CreationTimestamp: metav1.Unix(1700000000, 0),
		Annotations:       map[string]string{"machinedeployment.clusters.k8s.io/revision": "3"},
	}}
	if profile != "" {
		md.Annotations["k8c.io/operating-system-profile"] = profile
	}
	return md
}

// Lister is a machinedeployments.Lister over a slice.
type Lister []*clusterv1alpha1.MachineDeployment

var _ machinedeployments.Lister = Lister(nil)

// List implements machinedeployments.Lister; like the informer's, in no order.
func (l Lister) List(namespace string, selector labels.Selector) ([]*clusterv1alpha1.MachineDeployment, error) {
	var out []*clusterv1alpha1.MachineDeployment
	for i := len(l) - 1; i >= 0; i-- {
		md := l[i]
		if (namespace == "" || md.Namespace == namespace) && selector.Matches(labels.Set(md.Labels)) {
			out = append(out, md)
		}
	}
	return out, nil
}

// Get implements machinedeployments.Lister.
func (l Lister) Get(namespace, name string) (*clusterv1alpha1.MachineDeployment, error) {
	for _, md := range l {
		if md.Namespace == namespace && md.Name == name {
			return md, nil
		}
	}
	return nil, apierrors.NewNotFound(machinedeployments.Resource, name)
}

// Renderer renders every MD the same way, except those named in Errors, and
// counts its calls.
type Renderer struct {
	Errors map[string]error // by MD name
	Calls  atomic.Int64
}

// Render implements registry.Renderer.
func (r *Renderer) Render(_ context.Context, md *clusterv1alpha1.MachineDeployment) *rendercache.Entry {
	r.Calls.Add(1)
	profile := osm.ProfileReference{Namespace: "kube-system", Name: md.Annotations["k8c.io/operating-system-profile"], Version: "v1.0.0"}
	if err := r.Errors[md.Name]; err != nil {
		return rendercache.NewFailed(profile, nil, err)
	}
	cfg := &osm.OperatingSystemConfigSpec{
		OSName: "ubuntu", OSVersion: "24.04", ProvisioningUtility: "cloud-init",
		CloudProvider: osm.CloudProviderSpec{Name: "aws"},
	}
	bootstrap, err := rendercache.NewPayload(osm.PayloadFormatCloudInit, []byte("#cloud-config\nbootstrap: "+md.Name+"\n"))
	if err == nil {
		var provisioning rendercache.Payload
		provisioning, err = rendercache.NewPayload(osm.PayloadFormatCloudInit, make([]byte, 20000))
		if err == nil {
			var e *rendercache.Entry
			if e, err = rendercache.NewEntry(profile, cfg, bootstrap, provisioning); err == nil {
				return e
			}
		}
	}
	return rendercache.NewFailed(profile, nil, err)
}

// ErrBroken is a render error for tests.
var ErrBroken = errors.New("osp-broken: provisioningConfig file /opt/x: template: line 1: unclosed action")

// ErrPending is a render waiting for the syncer, for tests.
var ErrPending = &rendercache.PendingError{Reason: "waiting for the syncer to create tokens"}
