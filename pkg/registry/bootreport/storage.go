// Package bootreport serves BootReports and their subresource step, through
// which nodes write them. A report is stored as a Secret in
// cloud-init-settings (pkg/bootreports); GET, LIST and WATCH read those
// Secrets through from kube-apiserver, so every replica, before and after a
// restart, serves the same objects with the Secrets' own resourceVersions
// and kube-apiserver's watch semantics.
package bootreport

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
)

// REST is the storage of bootreports: read-only (nodes write through
// StepREST), read through to the reports' Secrets.
type REST struct {
	secrets typedcorev1.SecretInterface
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

// resource is bootreports.osm.k8c.io.
var resource = osm.Resource(registry.BootReports)

// NewREST returns the storage reading the reports' Secrets with secrets, a
// client of bootreports.Namespace.
func NewREST(secrets typedcorev1.SecretInterface) *REST {
	return &REST{secrets: secrets}
}

// New implements rest.Storage.
func (r *REST) New() runtime.Object {
	return &osm.BootReport{}
}

// Destroy implements rest.Storage.
func (r *REST) Destroy() {}

// NewList implements rest.Lister.
func (r *REST) NewList() runtime.Object {
	return &osm.BootReportList{}
}

// NamespaceScoped implements rest.Scoper.
func (r *REST) NamespaceScoped() bool {
	return true
}

// GetSingularName implements rest.SingularNameProvider.
func (r *REST) GetSingularName() string {
	return "bootreport"
}

// Categories implements rest.CategoriesProvider.
func (r *REST) Categories() []string {
	return []string{"osm"}
}

// Get implements rest.Getter.
func (r *REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	namespace := genericapirequest.NamespaceValue(ctx)
	opts := metav1.GetOptions{}
	if options != nil {
		opts.ResourceVersion = options.ResourceVersion
	}
	s, err := r.secrets.Get(ctx, bootreports.SecretName(namespace, name), opts)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(resource, name)
	}
	if err != nil {
		return nil, readError(err)
	}
	report, ok := convert(s)
	if !ok || report.Namespace != namespace || report.Name != name {
		return nil, apierrors.NewNotFound(resource, name)
	}
	return report, nil
}

// List implements rest.Lister: a list of the reports' Secrets, with its
// resourceVersion and continue token.
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	q := newQuery(ctx, options)
	list, err := r.secrets.List(ctx, q.secretOptions)
	if err != nil {
		return nil, readError(err)
	}
	out := &osm.BootReportList{ListMeta: list.ListMeta, Items: make([]osm.BootReport, 0, len(list.Items))}
	for i := range list.Items {
		if report, ok := convert(&list.Items[i]); ok && q.matches(report) {
			out.Items = append(out.Items, *report)
		}
	}
	return out, nil
}

// Watch implements rest.Watcher: a watch of the reports' Secrets, from the
// same resourceVersions, with kube-apiserver's answers (410 Gone for one it
// no longer has, bookmarks, initial events).
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	q := newQuery(ctx, options)
	w, err := r.secrets.Watch(ctx, q.secretOptions)
	if err != nil {
		return nil, readError(err)
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			s, ok := ev.Object.(*corev1.Secret)
			if !ok {
				return ev, false
			}
			report, ok := convert(s)
			if !ok || !q.matches(report) {
				return ev, false
			}
			return watch.Event{Type: ev.Type, Object: report}, true
		case watch.Bookmark:
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				return ev, false
			}
			return watch.Event{Type: ev.Type, Object: &osm.BootReport{ObjectMeta: metav1.ObjectMeta{
				ResourceVersion: m.GetResourceVersion(), Annotations: m.GetAnnotations()}}}, true
		}
		// Errors (a *metav1.Status) pass as they are.
		return ev, true
	}), nil
}

// convert returns the report of a Secret; a Secret that holds none (edited
// by someone else) is logged and left out.
func convert(s *corev1.Secret) (*osm.BootReport, bool) {
	report, err := bootreports.FromSecret(s)
	if err != nil {
		klog.ErrorS(err, "Failed to read a boot report", "secret", klog.KObj(s))
		return nil, false
	}
	return report, true
}

// readError returns the error of a read of the reports' Secrets as the
// client should see it: kube-apiserver's answers about resourceVersions,
// continue tokens and load as they are; osm-apiserver's own lack of access
// as the server's fault, not the client's.
func readError(err error) error {
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		return apierrors.NewInternalError(fmt.Errorf("osm-apiserver cannot read the boot reports' Secrets in %s: %w", bootreports.Namespace, err))
	}
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return apierrors.NewInternalError(err)
}
