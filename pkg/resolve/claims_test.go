package resolve

import (
	"context"
	"errors"
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// MD "pool" in "team-prod" and "pool-team" in "prod" share machine-controller's
// Secret names: the older has them, the other's output is the conflict, and it
// is not rendered (its tokens are not even needed).
func TestConflictingMachineDeploymentsRenderOnce(t *testing.T) {
	f := newFixture(t, osp("kube-system", "ubuntu", "v1", "1"))
	owner := machinecontrollertest.MD("team-prod", "pool", "ubuntu", nil)
	other := machinecontrollertest.MD("prod", "pool-team", "ubuntu", nil)
	other.CreationTimestamp.Time = owner.CreationTimestamp.Add(1)
	f.resolver.cfg.Claims = &machines.Claims{
		MachineDeployments: machinecontrollertest.Lister{owner, other},
		Secrets:            corev1listers.NewSecretLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})),
	}
	f.resolver.cfg.Tokens = tokensOf{"team-prod/pool": true}

	if out := f.resolver.Resolve(context.Background(), owner); out.Err != nil {
		t.Fatalf("owner: %v", out.Err)
	}
	out := f.resolver.Resolve(context.Background(), other)
	var conflict *machinecontroller.ConflictError
	if !errors.As(out.Err, &conflict) || conflict.Owner.String() != "team-prod/pool" {
		t.Fatalf("other: %v, want a conflict with team-prod/pool", out.Err)
	}
	if _, pending := out.Pending(); pending {
		t.Error("the conflict shows as pending")
	}
	if cfg, err := out.Config(); err != nil || cfg.OSName != "ubuntu" || out.Bootstrap.Size != 0 {
		t.Errorf("other: config %+v (%v), bootstrap %d bytes; want the OS only", cfg, err, out.Bootstrap.Size)
	}
	if n := f.renderer.calls.Load(); n != 1 {
		t.Errorf("%d renders, want 1 (the owner's)", n)
	}
}

// tokensOf has tokens for the MDs named in it only.
type tokensOf map[string]bool

func (t tokensOf) Tokens(md *clusterv1alpha1.MachineDeployment) (kubelet, fetch string) {
	if !t[md.Namespace+"/"+md.Name] {
		return "", ""
	}
	return token, "getter"
}

// A payload the syncer cannot write, as it is larger than a Secret can be, is
// the MD's error, with the config still shown.
func TestPayloadLargerThanASecret(t *testing.T) {
	f := newFixture(t, osp("kube-system", "huge", "v1", "1"))
	out := f.resolver.Resolve(context.Background(), md("huge"))
	var limit *SecretLimitError
	if !errors.As(out.Err, &limit) || limit.Kind != osm.PayloadTypeProvisioning || limit.Limit != 1<<20 {
		t.Fatalf("error %v, want the provisioning payload over 1 MiB", out.Err)
	}
	if !strings.Contains(out.Err.Error(), "kube-system/workers") || !strings.Contains(out.Err.Error(), "more than the 1Mi a Secret can hold") {
		t.Errorf("error %q does not say which MD and what limit", out.Err)
	}
	if cfg, err := out.Config(); err != nil || len(cfg.ProvisioningConfig.Files) == 0 {
		t.Errorf("config %+v (%v): want the rendered view", cfg, err)
	}
}
