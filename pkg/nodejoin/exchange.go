package nodejoin

import (
	"context"
	"errors"
	"fmt"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// Callers says which MachineDeployment a caller is the fetch credential of
// (*tokens.Source).
type Callers interface {
	CallerMachineDeployment(u user.Info) (machinecontroller.Ref, bool)
}

// Request is one MachineJoin: who asks, in which namespace, for which
// machine, from which boot.
type Request struct {
	User        user.Info
	Namespace   string
	MachineName string
	BootID      string
	// BootSecret is the boot's own random value ("" from older profiles).
	BootSecret string
}

// Answer is what the node joins with.
type Answer struct {
	// Kubeconfig is the kubelet's bootstrap kubeconfig with the join token.
	Kubeconfig []byte
	Expiration time.Time
	// Provisioning is the MD's provisioning payload.
	Provisioning       []byte
	ProvisioningFormat osm.PayloadFormat
	// Profile and Revision are what Provisioning was rendered from: the
	// profile and the MD's revision (its revision annotation). The node
	// reports them in its BootReport: what it got, whatever the MD says later.
	Profile  osm.ProfileReference
	Revision string
}

// UnavailableError says why a request cannot be answered now; asking again
// later may work.
type UnavailableError struct {
	Reason string
}

func (e *UnavailableError) Error() string { return e.Reason }

// Exchange answers MachineJoins. Every replica answers; the Issuer keeps a
// machine to one answer across them.
type Exchange struct {
	Callers            Callers
	MachineDeployments machines.Lister
	Machines           *machines.MachineReader
	Resolver           resolve.Interface
	Facts              resolve.FactsSource
	Issuer             *Issuer
	// Synced says whether the informers read above have listed: before, an
	// unknown Machine may only be one not seen yet.
	Synced func() bool
}

// Join answers r, or fails with a *RefusedError (the request is not allowed:
// 403), an *UnavailableError (not now: 503) or another error.
func (e *Exchange) Join(ctx context.Context, r Request) (*Answer, error) {
	start := time.Now()
	answer, err := e.join(ctx, r)
	result := "answered"
	var refused *RefusedError
	var unavailable *UnavailableError
	logger := klog.FromContext(ctx).WithValues("machine", klog.KRef(r.Namespace, r.MachineName), "bootID", r.BootID, "user", userName(r.User))
	switch {
	case errors.As(err, &refused):
		result = "refused"
		logger.Info("Refused a MachineJoin", "reason", refused.Reason)
	case errors.As(err, &unavailable):
		result = "unavailable"
		logger.V(2).Info("Cannot answer a MachineJoin now", "reason", unavailable.Reason)
	case err != nil:
		result = "failed"
		logger.Error(err, "Failed to answer a MachineJoin")
	default:
		logger.Info("Answered a MachineJoin", "expiration", answer.Expiration)
	}
	metrics.MachineJoins.WithLabelValues(result).Observe(time.Since(start).Seconds())
	return answer, err
}

func (e *Exchange) join(ctx context.Context, r Request) (*Answer, error) {
	if !e.Synced() {
		return nil, &UnavailableError{Reason: "osm-apiserver has not listed the Machines and Nodes yet"}
	}
	ref, ok := e.Callers.CallerMachineDeployment(r.User)
	if !ok {
		return nil, refuse("%s is not the fetch credential of a MachineDeployment: only the credential in a node's user-data may post a MachineJoin", userName(r.User))
	}
	if ref.Namespace != r.Namespace {
		return nil, refuse("the fetch credential of machinedeployment %s joins machines in namespace %s only", ref, ref.Namespace)
	}
	md, err := e.MachineDeployments.Get(ref.Namespace, ref.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if err != nil || md.DeletionTimestamp != nil {
		return nil, refuse("machinedeployment %s is gone", ref)
	}
	m, err := e.machine(ref, r.MachineName)
	if err != nil {
		return nil, err
	}
	out := e.Resolver.Resolve(ctx, md)
	if out.NodeJoin != osm.NodeJoinMachineJoin && out.NodeJoin != "" {
		return nil, refuse("the nodes of machinedeployment %s do not join through a MachineJoin: its profile %s/%s reads its Secrets", ref, out.Profile.Namespace, out.Profile.Name)
	}
	if out.Err != nil {
		// Nothing is claimed before there is an answer to give.
		return nil, &UnavailableError{Reason: fmt.Sprintf("the payloads of machinedeployment %s are not rendered: %v", ref, out.Err)}
	}
	provisioning, err := out.Provisioning.UserData()
	if err != nil {
		return nil, err
	}
	f := e.Facts.Current()
	if f == nil || f.Cluster.ServerURL == "" || f.Cluster.CACert == "" {
		return nil, &UnavailableError{Reason: "the API server URL and CA of the cluster are not known yet"}
	}
	cred, err := e.Issuer.Issue(ctx, m, Boot{ID: r.BootID, Secret: r.BootSecret})
	if err != nil {
		return nil, err
	}
	kubeconfig, err := machinecontroller.BootstrapKubeconfig(f.Cluster.ServerURL, []byte(f.Cluster.CACert), cred.Token)
	if err != nil {
		return nil, fmt.Errorf("failed to write the bootstrap kubeconfig of machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	return &Answer{Kubeconfig: kubeconfig, Expiration: cred.Expiration, Provisioning: provisioning, ProvisioningFormat: out.Provisioning.Format,
		// out is md's render: its cache key holds md's annotations, the revision too.
		Profile: out.Profile, Revision: md.Annotations[machinecontroller.AnnotationMDRevision]}, nil
}

// machine returns the Machine name of ref that has not joined yet.
func (e *Exchange) machine(ref machinecontroller.Ref, name string) (*clusterv1alpha1.Machine, error) {
	m, err := e.Machines.Get(ref.Namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, refuse("there is no machine %s/%s", ref.Namespace, name)
	}
	if err != nil {
		return nil, err
	}
	if owner, ok := e.Machines.MachineDeploymentOf(m); !ok || owner != ref {
		return nil, refuse("machine %s/%s does not belong to machinedeployment %s", m.Namespace, m.Name, ref)
	}
	if m.DeletionTimestamp != nil {
		return nil, refuse("machine %s/%s is being deleted", m.Namespace, m.Name)
	}
	if node, joined := e.Machines.NodeOf(m); joined {
		return nil, refuse("machine %s/%s has joined as node %s", m.Namespace, m.Name, node)
	}
	return m, nil
}

func refuse(format string, args ...any) *RefusedError {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

func userName(u user.Info) string {
	if u == nil {
		return "an anonymous request"
	}
	return "user " + u.GetName()
}
