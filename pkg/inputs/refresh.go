package inputs

import (
	"sync"

	"k8s.io/klog/v2"
)

// Refresher keeps a Resolver's facts current: Refresh recomputes them and, if
// they changed, swaps them in and tells OnChange, so that everything rendered
// from them is rendered again. Bad new values keep the last good ones.
type Refresher struct {
	Resolver *Resolver
	// Compute reads the facts from where they live now (informer caches). A
	// part it cannot read keeps its current value, and err says why; the
	// other parts still apply.
	Compute func() (Facts, error)
	// OnChange runs after new facts are swapped in.
	OnChange func()

	mu sync.Mutex
}

// Refresh recomputes the facts. It is safe to call from several informers'
// handlers: calls are serialized, so the last computed facts win.
func (r *Refresher) Refresh() {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := r.Compute()
	if err != nil {
		klog.ErrorS(err, "Keeping the last good cluster facts or node options")
	}
	changed, err := r.Resolver.SetFacts(f)
	if err != nil {
		klog.ErrorS(err, "Keeping the last good cluster facts and node options")
		return
	}
	if !changed {
		return
	}
	klog.InfoS("Cluster facts or node options changed, rendering every MachineDeployment again", "server", f.Cluster.ServerURL)
	if r.OnChange != nil {
		r.OnChange()
	}
}
