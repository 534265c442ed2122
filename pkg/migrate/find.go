package migrate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Options say where to look.
type Options struct {
	// ProfileNamespace is osm-apiserver's --namespace: profiles of MDs that
	// name no namespace, and its default profiles.
	ProfileNamespace string
	// UpstreamNamespace is upstream's -namespace: its OperatingSystemConfigs
	// and its controller's Lease.
	UpstreamNamespace string
	// DefaultProfiles are the names of osm-apiserver's default profiles.
	DefaultProfiles []string
	// Now is the time leases are judged at; zero means time.Now().
	Now time.Time
}

// Find reads what upstream OSM left in the clusters, and how far osm-apiserver
// has taken over. It writes nothing.
func Find(ctx context.Context, c Clients, o Options) (*State, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	s := &State{}
	var err error
	for _, f := range []func() error{
		func() error { return s.findControllers(ctx, c, o) },
		func() error { return s.findServing(c) },
		func() error { return s.findCRDs(ctx, c) },
		func() error { return s.findWebhooks(ctx, c) },
		func() error { return s.findGetter(ctx, c.Worker) },
		func() error { return s.findMachineDeployments(ctx, c, o) },
		func() error { return s.findMachines(ctx, c) },
		func() error { return s.findProfiles(ctx, c, o) },
	} {
		if err = f(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *State) findControllers(ctx context.Context, c Clients, o Options) error {
	for _, l := range []struct {
		client          kubernetes.Interface
		namespace, name string
	}{{c.Management, o.UpstreamNamespace, ControllerLease}, {c.Worker, "kube-system", WorkerLease}} {
		lease, err := l.client.CoordinationV1().Leases(l.namespace).Get(ctx, l.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("failed to get lease %s/%s: %w", l.namespace, l.name, err)
		}
		spec := lease.Spec
		if spec.HolderIdentity == nil || *spec.HolderIdentity == "" || spec.RenewTime == nil {
			continue
		}
		duration := 15 * time.Second
		if spec.LeaseDurationSeconds != nil {
			duration = time.Duration(*spec.LeaseDurationSeconds) * time.Second
		}
		if ago := o.Now.Sub(spec.RenewTime.Time); ago < duration+leaseGrace {
			s.Running = append(s.Running, fmt.Sprintf("Lease %s/%s held by %s, renewed %s ago", l.namespace, l.name,
				*spec.HolderIdentity, max(ago, 0).Round(time.Second)))
		}
	}
	return nil
}

func (s *State) findServing(c Clients) error {
	_, err := c.Management.Discovery().ServerResourcesForGroupVersion(osmv1alpha1.SchemeGroupVersion.String())
	s.Serving = err == nil
	if err != nil {
		s.NotServing = err.Error()
	}
	return nil
}

func (s *State) findCRDs(ctx context.Context, c Clients) error {
	crds := c.ManagementDynamic.Resource(CRDResource)
	osp, err := crds.Get(ctx, "operatingsystemprofiles."+Group, metav1.GetOptions{})
	switch {
	case err == nil:
		s.OSPCRDUpstream = !immutableSpec(osp)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("failed to get customresourcedefinition operatingsystemprofiles.%s: %w", Group, err)
	}
	_, err = crds.Get(ctx, OSCCRD, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to get customresourcedefinition %s: %w", OSCCRD, err)
	}
	s.OSCCRD = true
	list, err := c.ManagementDynamic.Resource(OSCResource).List(ctx, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) { // NotFound: the CRD is not served yet, or any more
		return fmt.Errorf("failed to list %s: %w", OSCResource.GroupResource(), err)
	}
	if list != nil {
		for _, o := range list.Items {
			s.OSCs = append(s.OSCs, o.GetNamespace()+"/"+o.GetName())
		}
	}
	slices.Sort(s.OSCs)
	return nil
}

// immutableSpec says whether an OperatingSystemProfile CRD has our rule that
// a spec changes only with spec.version.
func immutableSpec(crd *unstructured.Unstructured) bool {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(m, "schema", "openAPIV3Schema", "properties", "spec", "x-kubernetes-validations")
		if len(rules) > 0 {
			return true
		}
	}
	return false
}

func (s *State) findWebhooks(ctx context.Context, c Clients) error {
	found, err := WebhookConfigurations(ctx, c.Management)
	if err != nil || !c.Separate {
		s.Webhooks = found
		return err
	}
	worker, err := WebhookConfigurations(ctx, c.Worker)
	for _, w := range worker {
		w.Worker = true
		found = append(found, w)
	}
	s.Webhooks = found
	return err
}

func (s *State) findProfiles(ctx context.Context, c Clients, o Options) error {
	list, err := c.OSM.OperatingsystemmanagerV1alpha1().OperatingSystemProfiles("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("failed to list operatingsystemprofiles: %w", err)
	}
	for _, p := range list.Items {
		profile := Profile{
			Namespace: p.Namespace, Name: p.Name, Version: p.Spec.Version,
			Ours:    p.Labels[machinecontroller.ManagedByLabel] == machinecontroller.ManagedByValue,
			Default: p.Namespace == o.ProfileNamespace && slices.Contains(o.DefaultProfiles, p.Name),
		}
		for _, md := range s.MachineDeployments {
			if md.ProfileErr == "" && md.Profile.Namespace == p.Namespace && md.Profile.Name == p.Name {
				profile.Users = append(profile.Users, md.Ref)
			}
		}
		s.Profiles = append(s.Profiles, profile)
	}
	slices.SortFunc(s.Profiles, func(a, b Profile) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return nil
}

// typed converts a MachineDeployment read through the dynamic client.
func typed(u *unstructured.Unstructured) (*clusterv1alpha1.MachineDeployment, error) {
	md := &clusterv1alpha1.MachineDeployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, md); err != nil {
		return nil, fmt.Errorf("failed to read machinedeployment %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return md, nil
}
