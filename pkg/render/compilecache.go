package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
)

// compiledOSPs bounds the parsed OSPs kept: a cluster has a handful of OSPs,
// each parsed per container runtime and revision, and per set of overlays
// that apply to some of its MachineDeployments.
const compiledOSPs = 64

// compileCache keeps parsed OSPs by revision. A failed parse is kept too, so a
// broken OSP is not parsed again on every render.
type compileCache struct {
	entries *lru.Cache[string, compileResult]
}

type compileResult struct {
	compiled *compiledOSP
	err      error
}

func newCompileCache(size int) *compileCache {
	return &compileCache{entries: lru.New[string, compileResult](size)}
}

// get returns the OSP parsed for runtime, parsing it on first use. Two renders
// racing on a new revision may both parse it; both results are equal.
func (c *compileCache) get(osp *ospv1alpha1.OperatingSystemProfile, overlays []*overlaysv1alpha1.OperatingSystemProfileOverlay, runtime string) (*compiledOSP, error) {
	key := revisionKey(osp)
	for _, o := range overlays {
		key += "+" + overlayRevisionKey(o)
	}
	key += "/" + runtime
	if r, ok := c.entries.Get(key); ok {
		return r.compiled, r.err
	}
	compiled, err := compile(osp, overlays, runtime)
	c.entries.Add(key, compileResult{compiled: compiled, err: err})
	return compiled, err
}

func (c *compileCache) len() int {
	return c.entries.Len()
}

// revisionKey identifies an OSP revision: uid and resourceVersion for objects
// from the API server, a hash of name and spec for objects read from files.
func revisionKey(osp *ospv1alpha1.OperatingSystemProfile) string {
	if osp.UID != "" {
		return string(osp.UID) + "@" + osp.ResourceVersion
	}
	// Marshalling a decoded OSP cannot fail.
	spec, _ := json.Marshal(&osp.Spec)
	h := sha256.New()
	h.Write([]byte(osp.Namespace + "/" + osp.Name + "\n"))
	h.Write(spec)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// overlayRevisionKey identifies an overlay's spec: uid and generation for
// objects from the API server (a status update changes neither), a hash of
// namespace, name and spec for objects read from files or posted for review.
func overlayRevisionKey(o *overlaysv1alpha1.OperatingSystemProfileOverlay) string {
	if o.UID != "" && o.Generation != 0 {
		return string(o.UID) + "@" + strconv.FormatInt(o.Generation, 10)
	}
	spec, _ := json.Marshal(&o.Spec)
	h := sha256.New()
	h.Write([]byte(o.Namespace + "/" + o.Name + "\n"))
	h.Write(spec)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
