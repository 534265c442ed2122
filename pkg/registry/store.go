package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// Objects is what a virtual resource adds to Store: how its objects are named
// after their MachineDeployment and built from its rendered output.
type Objects interface {
	// Names returns the names of md's objects, in list order.
	Names(md *clusterv1alpha1.MachineDeployment) []string
	// MachineDeployment returns the name of the MachineDeployment of the object
	// called name; ok is false for a name no MachineDeployment has.
	MachineDeployment(name string) (mdName string, ok bool)
	// Object returns the object called name of md from its output, with
	// resourceVersion rv. A nil object means md has no such object now, and
	// err says why (wrapping a *resolve.PendingError while its render is
	// pending); nil, nil means md never has one of that name.
	Object(md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered, name, rv string) (runtime.Object, error)
	// Stub returns the object called name of md with only its metadata and
	// what names it, for the DELETED event of an object that has no content.
	Stub(md *clusterv1alpha1.MachineDeployment, name, rv string) runtime.Object
	// List returns the resource's list of objs, which Object built.
	List(objs []runtime.Object) runtime.Object
}

// Store is the storage of a virtual, read-only resource: objects computed on
// request from MachineDeployments (their informer) and their rendered output
// (the resolver), with watches driven by the change feed. It implements no
// write interface, so the generic server answers writes with 405. Each
// resource embeds it and adds its table.
type Store struct {
	Resource     schema.GroupResource
	SingularName string
	NewFunc      func() runtime.Object
	NewListFunc  func() runtime.Object
	Objects      Objects

	MachineDeployments machines.Lister
	Resolver           resolve.Interface
	Feed               *changefeed.Feed
	// ReadsMachines says the objects show the boot reports of the MD's
	// machines: changes of reports (changefeed.Event.Machines) are events
	// of this resource.
	ReadsMachines bool
}

var (
	_ rest.Storage              = &Store{}
	_ rest.Getter               = &Store{}
	_ rest.Watcher              = &Store{}
	_ rest.Scoper               = &Store{}
	_ rest.SingularNameProvider = &Store{}
	_ rest.CategoriesProvider   = &Store{}
)

// New implements rest.Storage.
func (s *Store) New() runtime.Object {
	return s.NewFunc()
}

// Destroy implements rest.Storage.
func (s *Store) Destroy() {}

// NewList implements rest.Lister.
func (s *Store) NewList() runtime.Object {
	return s.NewListFunc()
}

// NamespaceScoped implements rest.Scoper.
func (s *Store) NamespaceScoped() bool {
	return true
}

// GetSingularName implements rest.SingularNameProvider.
func (s *Store) GetSingularName() string {
	return s.SingularName
}

// Categories implements rest.CategoriesProvider: `kubectl get osm` lists every
// resource of the group.
func (s *Store) Categories() []string {
	return []string{"osm"}
}

// Get implements rest.Getter. An object that exists by name but has no content
// now is a 503 with Retry-After while its render is pending, a 500 with the
// render error when it failed.
func (s *Store) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if err := s.Feed.WaitListed(ctx); err != nil {
		return nil, FeedError(err)
	}
	namespace := genericapirequest.NamespaceValue(ctx)
	mdName, ok := s.Objects.MachineDeployment(name)
	if !ok {
		return nil, apierrors.NewNotFound(s.Resource, name)
	}
	md, err := s.MachineDeployments.Get(namespace, mdName)
	// IsNotFound allocates: it is asked only of an error.
	if err != nil && apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(s.Resource, name)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get machinedeployment %s/%s: %w", namespace, mdName, err)
	}
	obj, err := s.Objects.Object(md, s.Resolver.Resolve(ctx, md), name, s.Feed.Version())
	switch {
	case obj != nil:
		return obj, nil
	case err == nil:
		return nil, apierrors.NewNotFound(s.Resource, name)
	}
	var pending *resolve.PendingError
	if errors.As(err, &pending) {
		return nil, s.pendingError(name, pending.Reason)
	}
	return nil, apierrors.NewInternalError(err)
}

// List implements rest.Lister. Objects of MDs whose render failed or is
// pending are listed if the resource has them (an OSC shows the error in its
// status) and left out otherwise; they never fail the list. The list and its
// objects carry the feed's position: a watch from it misses no change.
func (s *Store) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	// Read the position before the MDs: a watch from it then misses no change.
	pos, err := ListPosition(ctx, s.Feed, options)
	if err != nil {
		return nil, err
	}
	rv := pos.String()
	objs, err := s.list(ctx, options, rv)
	if err != nil {
		return nil, err
	}
	list := s.Objects.List(objs)
	if m, err := meta.ListAccessor(list); err == nil {
		m.SetResourceVersion(rv)
	}
	return list, nil
}

func (s *Store) list(ctx context.Context, options *metainternalversion.ListOptions, rv string) ([]runtime.Object, error) {
	mds, err := ListMachineDeployments(ctx, s.MachineDeployments, options)
	if err != nil {
		return nil, err
	}
	fields := FieldSelector(options)
	objs := make([]runtime.Object, 0, len(mds))
	object := s.Objects.Object
	if summary, ok := s.Objects.(SummaryObjects); ok && TableOnly(ctx) {
		object = summary.SummaryObject
	}
	for _, md := range mds {
		var out *resolve.Rendered
		for _, name := range s.Objects.Names(md) {
			if !MatchesFields(&metav1.ObjectMeta{Name: name, Namespace: md.Namespace}, fields) {
				continue
			}
			if out == nil {
				out = s.Resolver.Resolve(ctx, md)
			}
			if obj, _ := object(md, out, name, rv); obj != nil {
				objs = append(objs, obj)
			}
		}
	}
	return objs, nil
}

// Watch implements rest.Watcher: changes of MDs and of everything their
// outputs are rendered from arrive as events.
func (s *Store) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	return Watch(ctx, WatchSource{
		Resource: s.Resource,
		Feed:     s.Feed,
		List:     s.list,
		Events:   s.events,
		New:      s.NewFunc,
	}, options)
}

// events are the events of one change of an MD. An object that has no
// content now (a payload of a failed render) is DELETED, as a new LIST would
// leave it out; one that never had any is not announced at all.
func (s *Store) events(ctx context.Context, ev changefeed.Event, typ watch.EventType, rv string) []watch.Event {
	if ev.Machines && !s.ReadsMachines {
		return nil
	}
	out := s.Resolver.Resolve(ctx, ev.MD)
	names := s.Objects.Names(ev.MD)
	events := make([]watch.Event, 0, len(names))
	if ev.Old != nil {
		// An MD that changed so that it has an object less (a payload
		// only edge MDs have): that object is gone.
		for _, name := range s.Objects.Names(ev.Old) {
			if !slices.Contains(names, name) {
				events = append(events, watch.Event{Type: watch.Deleted, Object: s.Objects.Stub(ev.Old, name, rv)})
			}
		}
	}
	for _, name := range names {
		obj, _ := s.Objects.Object(ev.MD, out, name, rv)
		switch {
		case obj != nil:
			events = append(events, watch.Event{Type: typ, Object: obj})
		case typ != watch.Added:
			events = append(events, watch.Event{Type: watch.Deleted, Object: s.Objects.Stub(ev.MD, name, rv)})
		}
	}
	return events
}

func (s *Store) pendingError(name, reason string) *apierrors.StatusError {
	return ServiceUnavailable(fmt.Sprintf("%s %q is pending: %s", s.Resource.String(), name, reason),
		metav1.StatusDetails{Group: s.Resource.Group, Kind: s.Resource.Resource, Name: name})
}
