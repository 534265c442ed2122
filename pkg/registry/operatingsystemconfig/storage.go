// Package operatingsystemconfig serves OperatingSystemConfigs: one virtual,
// read-only object per MachineDeployment that names a profile, rendered on
// request from the informer caches (and the render cache).
package operatingsystemconfig

import (
	"context"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
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

// REST is the storage of operatingsystemconfigs. It implements no write
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
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.CategoriesProvider   = &REST{}
)

// NewREST returns the storage reading MDs from mds, rendering through renderer
// and watching feed.
func NewREST(mds machinedeployments.Lister, renderer registry.Renderer, feed *changefeed.Feed) *REST {
	return &REST{
		groupResource: osm.Resource(registry.OperatingSystemConfigs),
		mds:           mds,
		renderer:      renderer,
		feed:          feed,
	}
}

// New implements rest.Storage.
func (r *REST) New() runtime.Object {
	return &osm.OperatingSystemConfig{}
}

// Destroy implements rest.Storage.
func (r *REST) Destroy() {}

// NewList implements rest.Lister.
func (r *REST) NewList() runtime.Object {
	return &osm.OperatingSystemConfigList{}
}

// NamespaceScoped implements rest.Scoper.
func (r *REST) NamespaceScoped() bool {
	return true
}

// GetSingularName implements rest.SingularNameProvider.
func (r *REST) GetSingularName() string {
	return "operatingsystemconfig"
}

// ShortNames implements rest.ShortNamesProvider.
func (r *REST) ShortNames() []string {
	return []string{"osc"}
}

// Categories implements rest.CategoriesProvider: `kubectl get osm` lists both resources.
func (r *REST) Categories() []string {
	return []string{"osm"}
}

// Get implements rest.Getter.
func (r *REST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	namespace := genericapirequest.NamespaceValue(ctx)
	md, err := r.mds.Get(namespace, name)
	if errors.IsNotFound(err) || err == nil && !changefeed.HasProfile(md) {
		return nil, errors.NewNotFound(r.groupResource, name)
	}
	if err != nil {
		klog.ErrorS(err, "Failed to get machinedeployment", "machineDeployment", klog.KRef(namespace, name))
		return nil, fmt.Errorf("failed to get machinedeployment %s/%s: %w", namespace, name, err)
	}
	return r.object(ctx, md, registry.Version(r.feed, md)), nil
}

// List implements rest.Lister. An MD whose render fails is listed with the error
// in its status; it does not fail the list.
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	// Read the version before the MDs: a watch from it then misses no change.
	version := r.feed.Current()
	mds, err := registry.ListMachineDeployments(ctx, r.mds, options)
	if err != nil {
		return nil, err
	}
	fields := registry.FieldSelector(options)
	list := &osm.OperatingSystemConfigList{Items: make([]osm.OperatingSystemConfig, 0, len(mds))}
	list.ResourceVersion = fmt.Sprint(version)
	for _, md := range mds {
		meta := metav1.ObjectMeta{Name: md.Name, Namespace: md.Namespace}
		if !registry.MatchesFields(&meta, fields) {
			continue
		}
		list.Items = append(list.Items, *r.object(ctx, md, registry.Version(r.feed, md)))
	}
	return list, nil
}

// Watch implements rest.Watcher: MD changes and changes of the profiles they use
// arrive as events.
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	return registry.Watch(ctx, registry.WatchSource{
		Resource: r.groupResource,
		Feed:     r.feed,
		List: func(ctx context.Context, options *metainternalversion.ListOptions) ([]runtime.Object, error) {
			obj, err := r.List(ctx, options)
			if err != nil {
				return nil, err
			}
			items := obj.(*osm.OperatingSystemConfigList).Items
			objs := make([]runtime.Object, len(items))
			for i := range items {
				objs[i] = &items[i]
			}
			return objs, nil
		},
		Events: func(ctx context.Context, ev changefeed.Event, typ watch.EventType, rv string) []watch.Event {
			return []watch.Event{{Type: typ, Object: r.object(ctx, ev.MD, rv)}}
		},
		New: r.New,
	}, options)
}

func (r *REST) object(ctx context.Context, md *clusterv1alpha1.MachineDeployment, rv string) *osm.OperatingSystemConfig {
	return newObject(md, r.renderer.Render(ctx, md), rv)
}

// newObject builds the OSC of md from a cache entry.
func newObject(md *clusterv1alpha1.MachineDeployment, e *rendercache.Entry, rv string) *osm.OperatingSystemConfig {
	spec, err := e.Config()
	renderErr := e.Err
	if err != nil {
		// Not the MD's fault, but the OSC is where its state is shown.
		klog.ErrorS(err, "Failed to read a rendered config", "machineDeployment", klog.KObj(md))
		spec, renderErr = &osm.OperatingSystemConfigSpec{}, err
	}
	pending, ok := e.Pending()
	if ok {
		// Not an error: the config renders as soon as what it waits for is there.
		renderErr = nil
	}
	return &osm.OperatingSystemConfig{
		ObjectMeta: registry.ObjectMeta(md, md.Name, rv),
		Spec:       *spec,
		Status: osm.OperatingSystemConfigStatus{
			Profile:                   e.Profile,
			MachineDeploymentRevision: md.Annotations[registry.RevisionAnnotation],
			BootstrapPayloadSize:      e.Bootstrap.Size,
			ProvisioningPayloadSize:   e.Provisioning.Size,
			RenderError:               registry.ErrorMessage(renderErr),
			Pending:                   pending,
		},
	}
}
