package inputs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
)

// mdHashes remembers the hash of each MD's spec and annotations by
// resourceVersion: the same resourceVersion is the same content, so the hash is
// computed once per MD change instead of once per GET. The hash itself does not
// depend on the resourceVersion, so status-only updates keep the cached render.
type mdHashes struct {
	cache *lru.Cache
}

type mdHash struct {
	resourceVersion string
	hash            string
}

func newMDHashes(size int) *mdHashes {
	return &mdHashes{cache: lru.New(size)}
}

func (h *mdHashes) get(md *clusterv1alpha1.MachineDeployment) (string, error) {
	if v, ok := h.cache.Get(md.UID); ok {
		if e := v.(mdHash); e.resourceVersion == md.ResourceVersion && md.ResourceVersion != "" {
			return e.hash, nil
		}
	}
	hash, err := hashMachineDeployment(md)
	if err != nil {
		return "", err
	}
	h.cache.Add(md.UID, mdHash{resourceVersion: md.ResourceVersion, hash: hash})
	return hash, nil
}

func (h *mdHashes) forget(uid types.UID) {
	h.cache.Remove(uid)
}

// hashMachineDeployment hashes what a render reads from an MD: its spec and
// annotations (which include the revision and the kubelet settings).
func hashMachineDeployment(md *clusterv1alpha1.MachineDeployment) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	if err := enc.Encode(md.Spec); err != nil {
		return "", fmt.Errorf("machinedeployment %s/%s: failed to hash spec: %w", md.Namespace, md.Name, err)
	}
	// json sorts map keys, so equal annotations hash equally.
	if err := enc.Encode(md.Annotations); err != nil {
		return "", fmt.Errorf("machinedeployment %s/%s: failed to hash annotations: %w", md.Namespace, md.Name, err)
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// hashJSON returns a short hash of v's JSON form, for options fixed at start.
func hashJSON(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12]), nil
}

// cacheKey joins every input of a render. The MD's name and namespace are in it
// because rendered Secret names contain them.
func cacheKey(md *clusterv1alpha1.MachineDeployment, mdHash string, osp *ospv1alpha1.OperatingSystemProfile, options, credentials string) string {
	return strings.Join([]string{
		md.Namespace, md.Name, string(md.UID), mdHash,
		string(osp.UID), osp.ResourceVersion,
		options, credentials,
	}, "|")
}
