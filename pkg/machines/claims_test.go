package machines

import (
	"errors"
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Both map to Secrets "pool-team-prod-{bootstrap,provisioning}-config".
var (
	pool     = machinecontroller.Ref{Namespace: "team-prod", Name: "pool"}
	poolTeam = machinecontroller.Ref{Namespace: "prod", Name: "pool-team"}
)

func claimMD(ref machinecontroller.Ref, created int64) *clusterv1alpha1.MachineDeployment {
	return &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{
		Namespace: ref.Namespace, Name: ref.Name, UID: types.UID("uid-" + ref.String()),
		CreationTimestamp: metav1.Unix(created, 0),
		Annotations:       map[string]string{machinecontroller.AnnotationOSP: "osp-ubuntu"},
	}}
}

// ownedSecret is a payload Secret of kind written for owner.
func ownedSecret(owner machinecontroller.Ref, kind osm.PayloadType) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: machinecontroller.CloudInitSettingsNamespace, Name: machinecontroller.SecretName(owner.Name, owner.Namespace, kind),
		Labels: owner.Labels(string(kind) + "-config"), Annotations: owner.Annotations(),
	}}
}

func newClaims(t *testing.T, mds []*clusterv1alpha1.MachineDeployment, secrets ...*corev1.Secret) *Claims {
	t.Helper()
	informer := newMachineDeploymentInformer(&cache.ListWatch{}, "kube-system")
	for _, md := range mds {
		if err := informer.GetIndexer().Add(md); err != nil {
			t.Fatal(err)
		}
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, s := range secrets {
		if err := indexer.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return &Claims{MachineDeployments: NewLister(informer.GetIndexer()), Secrets: corev1listers.NewSecretLister(indexer)}
}

func TestClaimsOwner(t *testing.T) {
	older, newer := claimMD(pool, 100), claimMD(poolTeam, 200)
	noProfile := claimMD(pool, 100)
	noProfile.Annotations = nil
	deleting := claimMD(pool, 100)
	deleting.DeletionTimestamp = &metav1.Time{}
	sameAgeA, sameAgeB := claimMD(pool, 100), claimMD(poolTeam, 100)
	sameAgeA.UID, sameAgeB.UID = "b", "a"
	stranger := machinecontroller.Ref{Namespace: "other", Name: "x"}
	forged := ownedSecret(stranger, osm.PayloadTypeBootstrap)
	forged.Name = machinecontroller.SecretName(pool.Name, pool.Namespace, osm.PayloadTypeBootstrap)

	tests := []struct {
		name    string
		mds     []*clusterv1alpha1.MachineDeployment
		secrets []*corev1.Secret
		seen    *corev1.Secret
		want    machinecontroller.Ref
	}{
		{name: "alone", mds: []*clusterv1alpha1.MachineDeployment{newer}, want: poolTeam},
		{name: "no secret yet: the oldest", mds: []*clusterv1alpha1.MachineDeployment{older, newer}, want: pool},
		{name: "same age: the lower uid", mds: []*clusterv1alpha1.MachineDeployment{sameAgeA, sameAgeB}, want: poolTeam},
		{
			name: "the first owner keeps its secrets", mds: []*clusterv1alpha1.MachineDeployment{older, newer},
			secrets: []*corev1.Secret{ownedSecret(poolTeam, osm.PayloadTypeBootstrap), ownedSecret(poolTeam, osm.PayloadTypeProvisioning)},
			want:    poolTeam,
		},
		{
			name: "provisioning written, bootstrap not yet", mds: []*clusterv1alpha1.MachineDeployment{older, newer},
			secrets: []*corev1.Secret{ownedSecret(poolTeam, osm.PayloadTypeProvisioning)},
			want:    poolTeam,
		},
		{
			name: "split between two owners: the bootstrap secret's", mds: []*clusterv1alpha1.MachineDeployment{older, newer},
			secrets: []*corev1.Secret{ownedSecret(poolTeam, osm.PayloadTypeBootstrap), ownedSecret(pool, osm.PayloadTypeProvisioning)},
			want:    poolTeam,
		},
		{
			name: "an owner that names no profile keeps its secrets: it has its OS's default", mds: []*clusterv1alpha1.MachineDeployment{noProfile, newer},
			secrets: []*corev1.Secret{ownedSecret(pool, osm.PayloadTypeBootstrap)},
			want:    pool,
		},
		{
			name: "the owner is being deleted: the other takes over", mds: []*clusterv1alpha1.MachineDeployment{deleting, newer},
			secrets: []*corev1.Secret{ownedSecret(pool, osm.PayloadTypeBootstrap)},
			want:    poolTeam,
		},
		{
			name: "a secret naming an MD that does not have these names is no claim", mds: []*clusterv1alpha1.MachineDeployment{older, newer},
			secrets: []*corev1.Secret{forged},
			want:    pool,
		},
		{
			name: "a secret just read from the API counts over the cache", mds: []*clusterv1alpha1.MachineDeployment{older, newer},
			seen: ownedSecret(poolTeam, osm.PayloadTypeProvisioning),
			want: poolTeam,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClaims(t, tc.mds, tc.secrets...)
			for _, md := range tc.mds {
				if md.DeletionTimestamp != nil {
					continue
				}
				var seen metav1.Object
				if tc.seen != nil {
					seen = tc.seen
				}
				got, err := c.Owner(md, seen)
				if err != nil || got != tc.want {
					t.Errorf("Owner(%s) = %s, %v; want %s", machinecontroller.RefOf(md), got, err, tc.want)
				}
			}
		})
	}
}

func TestClaimsCheck(t *testing.T) {
	c := newClaims(t, []*clusterv1alpha1.MachineDeployment{claimMD(pool, 100), claimMD(poolTeam, 200)},
		ownedSecret(pool, osm.PayloadTypeBootstrap))
	if err := c.Check(claimMD(pool, 100)); err != nil {
		t.Errorf("the owner: %v", err)
	}
	err := c.Check(claimMD(poolTeam, 200))
	var conflict *machinecontroller.ConflictError
	if !errors.As(err, &conflict) || conflict.Owner != pool || conflict.MD != poolTeam {
		t.Fatalf("the other: %v, want a conflict with %s", err, pool)
	}
	for _, want := range []string{"team-prod/pool", "prod/pool-team", "cloud-init-settings/pool-team-prod-{bootstrap,provisioning}-config"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
}
