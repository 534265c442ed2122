package resolve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
)

// Rendered is the output of one MachineDeployment under one set of inputs: what
// the API serves and the syncer writes. It is shared between requests and
// must be treated as read-only.
//
// What every request needs — profile, summary of the config, payload sizes and
// digests, errors — is kept as long as the MD's output is current. The rendered
// config and payloads themselves (the body) are kept compressed, and a cached
// output's body is charged to the render cache's byte budget: when the budget
// drops it, the next reader renders the same inputs again (and checks the
// digests), so a fleet larger than the budget costs renders for readers of
// bodies only — never for a table of OSCs, nor for the syncer's check that its
// Secrets are up to date.
type Rendered struct {
	// Profile is the OperatingSystemProfile the output was rendered from.
	Profile osm.ProfileReference
	// CloudProvider is the name of the config's cloud provider, so that
	// payloads are served without unpacking the config.
	CloudProvider string
	// OSName, OSVersion and ProvisioningUtility are the config's, for
	// tables, without unpacking the config.
	OSName, OSVersion, ProvisioningUtility string
	// Bootstrap and Provisioning are the exact user-data the Secrets hold.
	Bootstrap, Provisioning Payload
	// EdgeScript is the join script of an MD on cloud provider edge; its
	// Format is empty for every other cloud.
	EdgeScript Payload
	// ViewBootstrap, ViewProvisioning and ViewEdgeScript are the sizes and
	// digests of the view's payloads (rendered from placeholders, no
	// user-data kept): what readers who may not read the payloads are shown
	// of them (an OSC's status, a view-only ProfileReview). Zero when the
	// view did not render.
	ViewBootstrap, ViewProvisioning, ViewEdgeScript Payload
	// Err is set when rendering failed; the payloads are then empty and the
	// config holds at most what the MachineDeployment asked for. It is the
	// view's error (see render.Input.View): safe to show to any reader.
	Err error
	// ViewErr is set when the payloads rendered but the view did not (a
	// template that depends on a secret's value); the config is then empty.
	ViewErr error
	// Waiting says what the output waits for while it is rendered from the
	// template of the MD's current revision, not from the MD's own template
	// (a paused MD, or the moments before machine-controller bumps the
	// revision): "template changed; waits for the MD's next revision".
	Waiting string
	// NodeJoin says how the MD's nodes get their kubelet credentials, known
	// once the profile parsed (a pending render knows it too).
	NodeJoin osm.NodeJoinMode
	// APIServer is the API server address of the facts it was rendered
	// with; nil before there were facts.
	APIServer *osm.APIServerStatus
	// Overlays are the overlays applied, in order (or tried: with Err).
	Overlays []osm.OverlayReference

	mu   sync.Mutex
	body *body // nil once the cache dropped it (or for an output without one)
	// budget is what body is charged to; nil keeps it for good.
	budget *lru.Weighted[*Rendered]
	// reload renders the same inputs again once body was dropped.
	reload func() *Rendered
	// reloading makes concurrent readers of a dropped body render once.
	reloading sync.Mutex
	// view renders the config (the view, redacted) of an output whose body
	// has none: the render keeps payloads only, since the syncer never reads
	// the config. nil for an output with its config in its body.
	view func() (*osm.OperatingSystemConfigSpec, error)
}

// body is the rendered config and payloads of an output.
type body struct {
	// The config is packed until the API first serves it, then kept unpacked
	// (and the packed copy dropped): the syncer never reads the config, so
	// outputs only it used stay small, while the API serves an output again
	// without decoding.
	config   []byte // packed JSON of an osm.OperatingSystemConfigSpec
	unpacked *osm.OperatingSystemConfigSpec
	// unpackedSize is the length of the JSON unpacked is decoded from.
	unpackedSize int
	payloads     [3][]byte // packed, by payloadIndex
}

// cost is what b is charged to the cache's budget: its bytes, an unpacked
// config as its JSON's length and half as much again, and a few hundred
// bytes of headers.
func (b *body) cost() int64 {
	n := int64(len(b.config)+b.unpackedSize*3/2) + 256
	for _, p := range b.payloads {
		n += int64(len(p))
	}
	return n
}

const (
	bootstrapIndex = iota
	provisioningIndex
	edgeScriptIndex
)

// errDropped is the error of a body dropped without a way to render it again.
var errDropped = errors.New("the rendered output was dropped from the render cache")

// NewRendered returns the output of a successful render. cfg must have its
// secrets redacted already.
func NewRendered(profile osm.ProfileReference, cfg *osm.OperatingSystemConfigSpec, bootstrap, provisioning Payload) (*Rendered, error) {
	e := &Rendered{Profile: profile, body: &body{}}
	e.summarize(cfg)
	e.Bootstrap = e.attach(bootstrapIndex, bootstrap)
	e.Provisioning = e.attach(provisioningIndex, provisioning)
	if err := e.setConfig(cfg); err != nil {
		return nil, err
	}
	return e, nil
}

// newLazy returns the output of a successful render whose config view
// renders when first read; summary is the config's summary.
func newLazy(profile osm.ProfileReference, summary *osm.OperatingSystemConfigSpec, bootstrap, provisioning Payload,
	view func() (*osm.OperatingSystemConfigSpec, error)) *Rendered {
	e := &Rendered{Profile: profile, body: &body{}, view: view}
	e.summarize(summary)
	e.Bootstrap = e.attach(bootstrapIndex, bootstrap)
	e.Provisioning = e.attach(provisioningIndex, provisioning)
	return e
}

// SetEdgeScript sets the output's edge script payload.
func (e *Rendered) SetEdgeScript(p Payload) {
	e.EdgeScript = e.attach(edgeScriptIndex, p)
}

// attach moves the user-data of p into e's body; the payload returned reads
// it from there.
func (e *Rendered) attach(i int, p Payload) Payload {
	e.body.payloads[i], p.packed = p.packed, nil
	p.owner, p.index = e, i
	return p
}

// NewFailed returns the output of a failed render; cfg, if not nil, says what
// the MachineDeployment asked for (OS name and version).
func NewFailed(profile osm.ProfileReference, cfg *osm.OperatingSystemConfigSpec, err error) *Rendered {
	e := &Rendered{Profile: profile, Err: err}
	if cfg != nil {
		e.summarize(cfg)
		e.body = &body{}
		if perr := e.setConfig(cfg); perr != nil {
			e.Err = fmt.Errorf("%w (and %w)", err, perr)
		}
	}
	return e
}

func (e *Rendered) summarize(cfg *osm.OperatingSystemConfigSpec) {
	e.CloudProvider, e.OSName, e.OSVersion, e.ProvisioningUtility = cfg.CloudProvider.Name, cfg.OSName, cfg.OSVersion, cfg.ProvisioningUtility
}

func (e *Rendered) setConfig(cfg *osm.OperatingSystemConfigSpec) error {
	data, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("failed to encode the rendered config: %w", err)
	}
	e.body.config, err = pack(data)
	return err
}

// Summary returns the part of the config a table shows (OS, version, cloud,
// provisioning utility) without unpacking it.
func (e *Rendered) Summary() *osm.OperatingSystemConfigSpec {
	return &osm.OperatingSystemConfigSpec{OSName: e.OSName, OSVersion: e.OSVersion, ProvisioningUtility: e.ProvisioningUtility,
		CloudProvider: osm.CloudProviderSpec{Name: e.CloudProvider}}
}

// loadBody returns e's body, rendering e's inputs again if the cache dropped
// it; nil, nil for an output without one.
func (e *Rendered) loadBody() (*body, error) {
	e.mu.Lock()
	b, budget, reload := e.body, e.budget, e.reload
	e.mu.Unlock()
	if b != nil {
		if budget != nil {
			budget.Touch(e)
		}
		return b, nil
	}
	if reload == nil {
		return nil, nil
	}
	e.reloading.Lock()
	defer e.reloading.Unlock()
	e.mu.Lock()
	b = e.body
	e.mu.Unlock()
	if b != nil { // another reader rendered it meanwhile
		return b, nil
	}
	again := reload()
	if again.Err != nil {
		return nil, fmt.Errorf("%w; rendering it again failed: %w", errDropped, again.Err)
	}
	if again.body == nil || again.Bootstrap.SHA256 != e.Bootstrap.SHA256 || again.Provisioning.SHA256 != e.Provisioning.SHA256 ||
		again.EdgeScript.SHA256 != e.EdgeScript.SHA256 {
		return nil, fmt.Errorf("%w; rendering the same inputs again gave other payloads", errDropped)
	}
	e.mu.Lock()
	e.body = again.body
	b = e.body
	e.mu.Unlock()
	if budget != nil {
		budget.Add(e, b.cost())
	}
	return b, nil
}

// drop lets go of e's body: the budget evicted it.
func (e *Rendered) drop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.reload != nil {
		e.body = nil
	}
}

// cost is what e's body costs now; 0 without one.
func (e *Rendered) cost() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.body == nil {
		return 0
	}
	return e.body.cost()
}

// Config returns the rendered config, with secrets redacted; it is empty when
// the output has none. The result is shared and must be treated as read-only.
func (e *Rendered) Config() (*osm.OperatingSystemConfigSpec, error) {
	if e.view != nil {
		return e.viewConfig(true)
	}
	b, err := e.loadBody()
	if err != nil || b == nil {
		return &osm.OperatingSystemConfigSpec{}, err
	}
	e.mu.Lock()
	if b.unpacked != nil {
		defer e.mu.Unlock()
		return b.unpacked, nil
	}
	packed := b.config
	e.mu.Unlock()
	cfg, size, err := decodeConfig(packed)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if b.unpacked == nil {
		b.unpacked, b.unpackedSize, b.config = cfg, size, nil
	}
	cfg = b.unpacked
	budget, current := e.budget, e.body == b
	cost := b.cost()
	e.mu.Unlock()
	if budget != nil && current {
		budget.Add(e, cost)
	}
	return cfg, nil
}

// PeekConfig returns the config as Config does, but leaves an output not
// unpacked yet as it is: for a reader of many outputs once (a review),
// which must not make the cache hold every config unpacked. The result is
// the caller's when it was unpacked for it, shared otherwise: read-only.
func (e *Rendered) PeekConfig() (*osm.OperatingSystemConfigSpec, error) {
	if e.view != nil {
		return e.viewConfig(false)
	}
	b, err := e.loadBody()
	if err != nil || b == nil {
		return &osm.OperatingSystemConfigSpec{}, err
	}
	e.mu.Lock()
	unpacked, packed := b.unpacked, b.config
	e.mu.Unlock()
	if unpacked != nil {
		return unpacked, nil
	}
	cfg, _, err := decodeConfig(packed)
	return cfg, err
}

// viewConfig returns the config of an output that renders it when read: the
// one kept in the body, or a new render of the view, kept in the body (and
// charged to the budget) when keep is set and the body is there. A body the
// budget dropped is not rendered again for it: the payloads are not needed.
func (e *Rendered) viewConfig(keep bool) (*osm.OperatingSystemConfigSpec, error) {
	e.mu.Lock()
	b, budget := e.body, e.budget
	var cfg *osm.OperatingSystemConfigSpec
	if b != nil {
		cfg = b.unpacked
	}
	e.mu.Unlock()
	if cfg != nil {
		if budget != nil {
			budget.Touch(e)
		}
		return cfg, nil
	}
	cfg, err := e.view()
	if err != nil || !keep || b == nil {
		return cfg, err
	}
	e.mu.Lock()
	current := e.body == b
	if current {
		if b.unpacked == nil {
			b.unpacked, b.unpackedSize = cfg, configSize(cfg)
		}
		cfg = b.unpacked
	}
	cost := b.cost()
	e.mu.Unlock()
	if budget != nil && current {
		budget.Add(e, cost)
	}
	return cfg, nil
}

// configSize estimates the length of cfg's JSON, for the budget: the
// contents it holds and a few hundred bytes of structure per item.
func configSize(cfg *osm.OperatingSystemConfigSpec) int {
	n := 512 + len(cfg.CloudProvider.Spec.Raw)
	for _, c := range []*osm.OSCConfig{&cfg.BootstrapConfig, &cfg.ProvisioningConfig} {
		for _, f := range c.Files {
			n += 128 + len(f.Path)
			if in := f.Content.Inline; in != nil {
				n += len(in.Data) + len(in.Encoding)
			}
		}
		for _, u := range c.Units {
			n += 128 + len(u.Name)
			if u.Content != nil {
				n += len(*u.Content)
			}
			for _, d := range u.DropIns {
				n += 64 + len(d.Name) + len(d.Content)
			}
		}
		for _, k := range c.UserSSHKeys {
			n += 4 + len(k)
		}
		if m := c.CloudInitModules; m != nil {
			for _, s := range m.RunCMD {
				n += 4 + len(s)
			}
			for _, s := range m.BootCMD {
				n += 4 + len(s)
			}
			for k, v := range m.RHSubscription {
				n += 8 + len(k) + len(v)
			}
		}
	}
	return n
}

func decodeConfig(packed []byte) (*osm.OperatingSystemConfigSpec, int, error) {
	cfg := &osm.OperatingSystemConfigSpec{}
	if packed == nil {
		return cfg, 0, nil
	}
	data, err := unpack(packed)
	if err != nil {
		return nil, 0, fmt.Errorf("failed to unpack the rendered config: %w", err)
	}
	if err := json.Unmarshal(data, cfg); err != nil {
		return nil, 0, fmt.Errorf("failed to decode the rendered config: %w", err)
	}
	return cfg, len(data), nil
}

// Payload is one rendered user-data.
type Payload struct {
	Format osm.PayloadFormat
	// Size is the length of the user-data in bytes.
	Size int64
	// SHA256 is the hex-encoded digest of the user-data.
	SHA256 string

	// The user-data is in its output's body (owner), or, for a payload not
	// attached to one yet, packed.
	owner  *Rendered
	index  int
	packed []byte
}

// NewPayload returns the payload for data, with its digest.
func NewPayload(format osm.PayloadFormat, data []byte) (Payload, error) {
	sum := sha256.Sum256(data)
	packed, err := pack(data)
	if err != nil {
		return Payload{}, fmt.Errorf("failed to pack the %s payload: %w", format, err)
	}
	return Payload{Format: format, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), packed: packed}, nil
}

// UserData returns the exact user-data; it renders the output again when the
// render cache dropped it.
func (p Payload) UserData() ([]byte, error) {
	packed := p.packed
	if p.owner != nil {
		b, err := p.owner.loadBody()
		if err != nil {
			return nil, fmt.Errorf("failed to read the %s payload: %w", p.Format, err)
		}
		if b != nil {
			packed = b.payloads[p.index]
		}
	}
	if packed == nil {
		return nil, nil
	}
	data, err := unpack(packed)
	if err != nil {
		return nil, fmt.Errorf("failed to unpack the %s payload: %w", p.Format, err)
	}
	if int64(len(data)) != p.Size {
		return nil, fmt.Errorf("failed to unpack the %s payload: %d bytes, want %d", p.Format, len(data), p.Size)
	}
	return data, nil
}

// Payload returns the payload of kind.
func (e *Rendered) Payload(kind osm.PayloadType) Payload {
	switch kind {
	case osm.PayloadTypeBootstrap:
		return e.Bootstrap
	case osm.PayloadTypeEdgeScript:
		return e.EdgeScript
	}
	return e.Provisioning
}
