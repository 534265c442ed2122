package resolve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// mdHash is the hash of what a render reads from an MD — its annotations and
// the template of its revision — at one resourceVersion of the MD and of its
// revision's MachineSet: the same versions are the same content, so the hash
// is computed once per change instead of once per GET. It does not depend on
// the resourceVersions, so status-only updates keep the cached render.
type mdHash struct {
	resourceVersion, machineSet string
	hash                        string
	// waiting says the MD's template differs from its revision's.
	waiting bool
	// The MD's tokens last seen, and their tokenVersion: hashing them on
	// every GET would cost more than the rest of a cached GET.
	kubelet, fetch, tokens string
}

// effective returns the MD a render of md reads: md itself, or a copy with
// the template of md's revision when md's own template changed since (see
// machines.RevisionTemplates), its hash, whether it waits for the
// next revision, and the tokenVersion of its tokens.
func (r *Resolver) effective(md *clusterv1alpha1.MachineDeployment, kubelet, fetch string) (*clusterv1alpha1.MachineDeployment, string, bool, string, error) {
	ms := r.cfg.Revisions.MachineSet(md)
	msKey := ""
	if ms != nil {
		msKey = string(ms.UID) + "@" + ms.ResourceVersion
	}
	h, ok := r.hashes.Get(md.UID)
	if !ok || h.resourceVersion != md.ResourceVersion || md.ResourceVersion == "" || h.machineSet != msKey {
		h = mdHash{resourceVersion: md.ResourceVersion, machineSet: msKey}
		h.waiting = ms != nil && machines.TemplateChanged(md, ms)
		var err error
		if h.hash, err = hashMachineDeployment(withTemplate(md, ms, h.waiting)); err != nil {
			return nil, "", false, "", err
		}
		h.kubelet, h.fetch, h.tokens = kubelet, fetch, tokenVersion(kubelet, fetch)
		r.hashes.Add(md.UID, h)
	} else if h.kubelet != kubelet || h.fetch != fetch {
		h.kubelet, h.fetch, h.tokens = kubelet, fetch, tokenVersion(kubelet, fetch)
		r.hashes.Add(md.UID, h)
	}
	return withTemplate(md, ms, h.waiting), h.hash, h.waiting, h.tokens, nil
}

// withTemplate returns md with the template of ms when waiting; md otherwise.
// md is the informer's: a shallow copy shares the rest with it, read-only.
func withTemplate(md *clusterv1alpha1.MachineDeployment, ms *clusterv1alpha1.MachineSet, waiting bool) *clusterv1alpha1.MachineDeployment {
	if !waiting {
		return md
	}
	m := *md
	m.Spec.Template.Spec = ms.Spec.Template.Spec
	return &m
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
// because rendered Secret names contain them; waiting because the output says
// so.
func cacheKey(md *clusterv1alpha1.MachineDeployment, mdHash string, waiting bool, osp *ospv1alpha1.OperatingSystemProfile,
	ovs []*overlaysv1alpha1.OperatingSystemProfileOverlay, facts, tokens string) string {
	parts := []string{
		md.Namespace, md.Name, string(md.UID), mdHash, strconv.FormatBool(waiting),
		string(osp.UID), osp.ResourceVersion,
		facts, tokens,
	}
	// An overlay's generation changes with its spec only: a status update
	// keeps the cached renders.
	for _, o := range ovs {
		parts = append(parts, string(o.UID)+"@"+strconv.FormatInt(o.Generation, 10))
	}
	return strings.Join(parts, "|")
}
