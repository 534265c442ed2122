package machines

import (
	"k8s.io/client-go/tools/cache"
)

// MachineDeploymentIndexers are the indexes of a MachineDeployment informer
// that Lister reads: by namespace, by profile (profiles of MDs that name no
// namespace are in profileNamespace) and by the prefix of their dictated
// Secret names.
func MachineDeploymentIndexers(profileNamespace string) cache.Indexers {
	return cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		ProfileIndex:         ProfileIndexFunc(profileNamespace),
		SecretPrefixIndex:    SecretPrefixIndexFunc,
	}
}
