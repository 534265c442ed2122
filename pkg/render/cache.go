package render

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
)

// defaultCacheSize bounds the parsed OSPs kept: a cluster has a handful of
// OSPs, each parsed per container runtime and revision.
const defaultCacheSize = 64

// compileCache keeps parsed OSPs by revision, least recently used evicted first.
// A failed parse is kept too, so a broken OSP is not re-parsed on every render.
type compileCache struct {
	mu      sync.Mutex
	size    int
	entries map[string]*list.Element
	lru     *list.List
}

type cacheEntry struct {
	key      string
	compiled *compiledOSP
	err      error
}

func newCompileCache(size int) *compileCache {
	return &compileCache{size: size, entries: map[string]*list.Element{}, lru: list.New()}
}

// get returns the OSP parsed for runtime, parsing it on first use.
func (c *compileCache) get(osp *ospv1alpha1.OperatingSystemProfile, runtime string) (*compiledOSP, error) {
	key := revisionKey(osp) + "/" + runtime
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		c.mu.Unlock()
		return e.compiled, e.err
	}
	c.mu.Unlock()

	// Parse outside the lock; two renders racing on a new OSP parse it twice
	// and keep the first result.
	compiled, err := compile(osp, runtime)

	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*cacheEntry)
		return e.compiled, e.err
	}
	c.entries[key] = c.lru.PushFront(&cacheEntry{key: key, compiled: compiled, err: err})
	for c.lru.Len() > c.size {
		oldest := c.lru.Back()
		c.lru.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry).key)
	}
	return compiled, err
}

func (c *compileCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
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
