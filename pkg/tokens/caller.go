package tokens

import (
	"strings"

	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// CallerMachineDeployment returns the MachineDeployment whose fetch
// credential u is: u is the ServiceAccount FetchAccessName(ref) in
// FetchNamespace and the syncer keeps ref's fetch token (so ref's
// ServiceAccount is osm-apiserver's, not one someone else named alike). ok is
// false for every other caller. Node-facing endpoints (MachineJoin, boot
// reports) authorize their caller with it: kube-apiserver lets every
// ServiceAccount of FetchNamespace through to them.
func (s *Source) CallerMachineDeployment(u user.Info) (ref machinecontroller.Ref, ok bool) {
	if u == nil {
		return machinecontroller.Ref{}, false
	}
	namespace, name, err := serviceaccount.SplitUsername(u.GetName())
	if err != nil || namespace != FetchNamespace || !strings.HasPrefix(name, fetchAccessPrefix) {
		return machinecontroller.Ref{}, false
	}
	secret, err := s.fetch.Secrets(FetchNamespace).Get(name + fetchTokenSecretSuffix)
	if err != nil {
		return machinecontroller.Ref{}, false
	}
	ref, ok = machinecontroller.Owner(secret)
	if !ok || FetchAccessName(ref) != name || secret.Labels[machinecontroller.PurposeLabel] != PurposeFetch {
		return machinecontroller.Ref{}, false
	}
	return ref, true
}
