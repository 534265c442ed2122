package tokens

import (
	"strings"

	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// fetchAccessPrefix starts the name of every fetch ServiceAccount.
const fetchAccessPrefix = "osm-fetch-"

// CallerMachineDeployment returns the MachineDeployment whose fetch
// credential u is: u is the ServiceAccount osm-fetch-<hash> of
// FetchNamespace, and the Secret holding that ServiceAccount's token, in
// fetch (Informer.FetchLister), was written for an MD of that hash. ok is
// false for anyone else, a ServiceAccount of another namespace or an MD's
// whose token the informer does not hold (being deleted, or not made yet).
func CallerMachineDeployment(u user.Info, fetch corev1listers.SecretLister) (machinecontroller.Ref, bool) {
	if u == nil {
		return machinecontroller.Ref{}, false
	}
	namespace, name, err := serviceaccount.SplitUsername(u.GetName())
	if err != nil || namespace != FetchNamespace || !strings.HasPrefix(name, fetchAccessPrefix) {
		return machinecontroller.Ref{}, false
	}
	s, err := fetch.Secrets(FetchNamespace).Get(name + "-token")
	if err != nil {
		return machinecontroller.Ref{}, false
	}
	ref, ok := machinecontroller.Owner(s)
	if !ok || !ownedBy(s, ref, PurposeFetch) || FetchAccessName(ref) != name {
		return machinecontroller.Ref{}, false
	}
	return ref, true
}
