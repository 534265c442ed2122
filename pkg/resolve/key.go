package resolve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
)

// mdHash is the hash of an MD's spec and annotations at one resourceVersion:
// the same resourceVersion is the same content, so the hash is computed once
// per MD change instead of once per GET. The hash itself does not depend on the
// resourceVersion, so status-only updates keep the cached render.
type mdHash struct {
	resourceVersion string
	hash            string
}

// hashOf returns md's hash, computing it once per resourceVersion.
func (r *Resolver) hashOf(md *clusterv1alpha1.MachineDeployment) (string, error) {
	if h, ok := r.hashes.Get(md.UID); ok && h.resourceVersion == md.ResourceVersion && md.ResourceVersion != "" {
		return h.hash, nil
	}
	hash, err := hashMachineDeployment(md)
	if err != nil {
		return "", err
	}
	r.hashes.Add(md.UID, mdHash{resourceVersion: md.ResourceVersion, hash: hash})
	return hash, nil
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

// cacheKey joins every input of a render. The MD's name and namespace are in it
// because rendered Secret names contain them.
func cacheKey(md *clusterv1alpha1.MachineDeployment, mdHash string, osp *ospv1alpha1.OperatingSystemProfile, facts, tokens string) string {
	return strings.Join([]string{
		md.Namespace, md.Name, string(md.UID), mdHash,
		string(osp.UID), osp.ResourceVersion,
		facts, tokens,
	}, "|")
}
