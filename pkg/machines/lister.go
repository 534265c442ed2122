package machines

import (
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// ProfileIndex indexes MachineDeployments by the profile they use
// (Profile.String(), defaulted or named), so a profile change finds its MDs
// without a full list.
const ProfileIndex = "profile"

// SecretPrefixIndex indexes MachineDeployments by Ref.SecretPrefix.
const SecretPrefixIndex = "secret-prefix"

// ProfileIndexFunc is the function of ProfileIndex: profiles of MDs that name
// no namespace are in defaultNamespace.
func ProfileIndexFunc(defaultNamespace string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		md, ok := obj.(*clusterv1alpha1.MachineDeployment)
		if !ok {
			return nil, nil
		}
		// An MD whose profile cannot be defaulted uses none.
		if p, err := machinecontroller.ProfileOf(md, defaultNamespace); err == nil {
			return []string{p.String()}, nil
		}
		return nil, nil
	}
}

// SecretPrefixIndexFunc is the function of SecretPrefixIndex.
func SecretPrefixIndexFunc(obj any) ([]string, error) {
	md, ok := obj.(*clusterv1alpha1.MachineDeployment)
	if !ok {
		return nil, nil
	}
	return []string{machinecontroller.RefOf(md).SecretPrefix()}, nil
}

// Lister reads MachineDeployments. Objects it returns belong to the informer's
// cache: callers must not modify them.
type Lister interface {
	// List returns the MachineDeployments of namespace ("" for all) matching selector.
	List(namespace string, selector labels.Selector) ([]*clusterv1alpha1.MachineDeployment, error)
	// Get returns one MachineDeployment or a NotFound error.
	Get(namespace, name string) (*clusterv1alpha1.MachineDeployment, error)
	// UsingProfile returns the MachineDeployments that use p, named or
	// defaulted (see ProfileIndex).
	UsingProfile(p machinecontroller.Profile) ([]*clusterv1alpha1.MachineDeployment, error)
	// SharingSecretNames returns the MachineDeployments whose dictated Secret
	// names are ref's (see Ref.SecretPrefix), ref's own included.
	SharingSecretNames(ref machinecontroller.Ref) ([]*clusterv1alpha1.MachineDeployment, error)
}

type indexerLister struct {
	indexer cache.Indexer
}

// NewLister returns a Lister over the indexer of an informer from
// NewMachineDeploymentInformer (or of one with MachineDeploymentIndexers).
func NewLister(indexer cache.Indexer) Lister {
	return indexerLister{indexer: indexer}
}

// List implements Lister.
func (l indexerLister) List(namespace string, selector labels.Selector) ([]*clusterv1alpha1.MachineDeployment, error) {
	var mds []*clusterv1alpha1.MachineDeployment
	err := cache.ListAllByNamespace(l.indexer, namespace, selector, func(obj any) {
		mds = append(mds, obj.(*clusterv1alpha1.MachineDeployment))
	})
	return mds, err
}

// Get implements Lister.
func (l indexerLister) Get(namespace, name string) (*clusterv1alpha1.MachineDeployment, error) {
	obj, exists, err := l.indexer.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, errors.NewNotFound(machinecontroller.MachineDeployments, name)
	}
	return obj.(*clusterv1alpha1.MachineDeployment), nil
}

// UsingProfile implements Lister.
func (l indexerLister) UsingProfile(p machinecontroller.Profile) ([]*clusterv1alpha1.MachineDeployment, error) {
	return l.byIndex(ProfileIndex, p.String())
}

// SharingSecretNames implements Lister.
func (l indexerLister) SharingSecretNames(ref machinecontroller.Ref) ([]*clusterv1alpha1.MachineDeployment, error) {
	return l.byIndex(SecretPrefixIndex, ref.SecretPrefix())
}

func (l indexerLister) byIndex(index, value string) ([]*clusterv1alpha1.MachineDeployment, error) {
	objs, err := l.indexer.ByIndex(index, value)
	if err != nil {
		return nil, err
	}
	mds := make([]*clusterv1alpha1.MachineDeployment, len(objs))
	for i, obj := range objs {
		mds[i] = obj.(*clusterv1alpha1.MachineDeployment)
	}
	return mds, nil
}
