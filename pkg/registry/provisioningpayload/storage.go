// Package provisioningpayload serves ProvisioningPayloads: the bootstrap and
// provisioning user-data of every MachineDeployment that names a profile, exactly
// as the Secrets machine-controller reads hold them. It is a resource apart from
// operatingsystemconfigs so that RBAC can show configs without the tokens inside
// payloads.
package provisioningpayload

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinedeployments"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
)

// types are the payloads of one MD, in the order they are listed.
var types = []osm.PayloadType{osm.PayloadTypeBootstrap, osm.PayloadTypeProvisioning}

// REST is the storage of provisioningpayloads. It implements no write
// interface, so the generic server answers writes with 405.
type REST struct {
	groupResource schema.GroupResource
	mds           machinedeployments.Lister
	renderer      registry.Renderer
	feed          *changefeed.Feed
}

var (
	_ rest.Storage              = &REST{}
	_ rest.Getter               = &REST{}
	_ rest.Lister               = &REST{}
	_ rest.Watcher              = &REST{}
	_ rest.TableConvertor       = &REST{}
	_ rest.Scoper               = &REST{}
	_ rest.SingularNameProvider = &REST{}
	_ rest.CategoriesProvider   = &REST{}
)

// NewREST returns the storage reading MDs from mds, rendering through renderer
// and watching feed.
func NewREST(mds machinedeployments.Lister, renderer registry.Renderer, feed *changefeed.Feed) *REST {
	return &REST{
		groupResource: osm.Resource(registry.ProvisioningPayloads),
		mds:           mds,
		renderer:      renderer,
		feed:          feed,
	}
}

// New implements rest.Storage.
func (r *REST) New() runtime.Object {
	return &osm.ProvisioningPayload{}
}

// Destroy implements rest.Storage.
func (r *REST) Destroy() {}

// NewList implements rest.Lister.
func (r *REST) NewList() runtime.Object {
	return &osm.ProvisioningPayloadList{}
}

// NamespaceScoped implements rest.Scoper.
func (r *REST) NamespaceScoped() bool {
	return true
}

// GetSingularName implements rest.SingularNameProvider.
func (r *REST) GetSingularName() string {
	return "provisioningpayload"
}

// Categories implements rest.CategoriesProvider.
func (r *REST) Categories() []string {
	return []string{"osm"}
}

// Get implements rest.Getter. Names are <machinedeployment>-bootstrap and
// <machinedeployment>-provisioning. When the MD's render failed there is no
// payload to serve: that is a 500 carrying the render error, the same message
// the MD's OperatingSystemConfig shows in its status.
func (r *REST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	namespace := genericapirequest.NamespaceValue(ctx)
	mdName, kind, ok := parseName(name)
	if !ok {
		return nil, errors.NewNotFound(r.groupResource, name)
	}
	md, err := r.mds.Get(namespace, mdName)
	if errors.IsNotFound(err) || err == nil && !changefeed.HasProfile(md) {
		return nil, errors.NewNotFound(r.groupResource, name)
	}
	if err != nil {
		klog.ErrorS(err, "Failed to get machinedeployment", "machineDeployment", klog.KRef(namespace, mdName))
		return nil, fmt.Errorf("failed to get machinedeployment %s/%s: %w", namespace, mdName, err)
	}
	e := r.renderer.Render(ctx, md)
	if reason, ok := e.Pending(); ok {
		return nil, r.pendingError(name, reason)
	}
	if e.Err != nil {
		return nil, errors.NewInternalError(fmt.Errorf("machinedeployment %s/%s has no %s payload: %w", namespace, mdName, kind, e.Err))
	}
	obj, err := newObject(md, e, kind, registry.Version(r.feed, md))
	if err != nil {
		return nil, errors.NewInternalError(err)
	}
	return obj, nil
}

// List implements rest.Lister. MDs whose render failed have no payloads and are
// left out; their OperatingSystemConfigs carry the error.
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	version := r.feed.Current()
	mds, err := registry.ListMachineDeployments(ctx, r.mds, options)
	if err != nil {
		return nil, err
	}
	fields := registry.FieldSelector(options)
	list := &osm.ProvisioningPayloadList{Items: make([]osm.ProvisioningPayload, 0, 2*len(mds))}
	list.ResourceVersion = fmt.Sprint(version)
	for _, md := range mds {
		var e *rendercache.Entry
		for _, kind := range types {
			meta := metav1.ObjectMeta{Name: payloadName(md.Name, kind), Namespace: md.Namespace}
			if !registry.MatchesFields(&meta, fields) {
				continue
			}
			if e == nil {
				e = r.renderer.Render(ctx, md)
			}
			if e.Err != nil {
				break
			}
			obj, err := newObject(md, e, kind, registry.Version(r.feed, md))
			if err != nil {
				return nil, errors.NewInternalError(err)
			}
			list.Items = append(list.Items, *obj)
		}
	}
	return list, nil
}

// Watch implements rest.Watcher.
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	return registry.Watch(ctx, registry.WatchSource{
		Resource: r.groupResource,
		Feed:     r.feed,
		List: func(ctx context.Context, options *metainternalversion.ListOptions) ([]runtime.Object, error) {
			obj, err := r.List(ctx, options)
			if err != nil {
				return nil, err
			}
			items := obj.(*osm.ProvisioningPayloadList).Items
			objs := make([]runtime.Object, len(items))
			for i := range items {
				objs[i] = &items[i]
			}
			return objs, nil
		},
		Events: r.events,
		New:    r.New,
	}, options)
}

// events are the payload events of one change of an MD. A payload whose MD no
// longer renders is DELETED, as a new LIST would leave it out; one that never
// rendered is not announced at all.
func (r *REST) events(ctx context.Context, ev changefeed.Event, typ watch.EventType, rv string) []watch.Event {
	e := r.renderer.Render(ctx, ev.MD)
	if e.Err != nil && typ == watch.Added {
		return nil
	}
	events := make([]watch.Event, 0, len(types))
	for _, kind := range types {
		if e.Err != nil {
			// Name the payload, without content: there is none.
			events = append(events, watch.Event{Type: watch.Deleted, Object: &osm.ProvisioningPayload{
				ObjectMeta: registry.ObjectMeta(ev.MD, payloadName(ev.MD.Name, kind), rv),
				Spec:       osm.ProvisioningPayloadSpec{MachineDeployment: ev.MD.Name, Type: kind},
			}})
			continue
		}
		obj, err := newObject(ev.MD, e, kind, rv)
		if err != nil {
			// Watchers get the next change; the error is the server's, not the MD's.
			klog.ErrorS(err, "Failed to build a payload event", "machineDeployment", klog.KObj(ev.MD))
			continue
		}
		events = append(events, watch.Event{Type: typ, Object: obj})
	}
	return events
}
