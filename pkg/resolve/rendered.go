package resolve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// Rendered is the output of one MachineDeployment under one set of inputs: what
// the API serves and the syncer writes. It is shared between requests and
// must be treated as read-only.
//
// The rendered config and payloads are kept compressed: they are mostly text,
// shrink 2-10x, and a cache of thousands of entries is otherwise the biggest
// part of the process's memory. Unpacking a payload costs tens of
// microseconds, far less than a render; the config is unpacked once, when the
// API first serves it.
type Rendered struct {
	// Profile is the OperatingSystemProfile the output was rendered from.
	Profile osm.ProfileReference
	// CloudProvider is the name of the config's cloud provider, so that
	// payloads are served without unpacking the config.
	CloudProvider string
	// Bootstrap and Provisioning are the exact user-data the Secrets hold.
	Bootstrap, Provisioning Payload
	// EdgeScript is the join script of an MD on cloud provider edge; its
	// Format is empty for every other cloud.
	EdgeScript Payload
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
	// Overlays are the overlays applied, in order (or tried: with Err).
	Overlays []osm.OverlayReference

	// The config is packed until the API first serves it, then kept unpacked
	// (and the packed copy dropped): the syncer never reads the config, so
	// outputs only it used stay small, while the API serves an output again
	// without decoding.
	mu       sync.Mutex
	config   []byte // packed JSON of an osm.OperatingSystemConfigSpec
	unpacked *osm.OperatingSystemConfigSpec
}

// NewRendered returns the output of a successful render. cfg must have its
// secrets redacted already.
func NewRendered(profile osm.ProfileReference, cfg *osm.OperatingSystemConfigSpec, bootstrap, provisioning Payload) (*Rendered, error) {
	e := &Rendered{Profile: profile, CloudProvider: cfg.CloudProvider.Name, Bootstrap: bootstrap, Provisioning: provisioning}
	if err := e.setConfig(cfg); err != nil {
		return nil, err
	}
	return e, nil
}

// NewFailed returns the output of a failed render; cfg, if not nil, says what
// the MachineDeployment asked for (OS name and version).
func NewFailed(profile osm.ProfileReference, cfg *osm.OperatingSystemConfigSpec, err error) *Rendered {
	e := &Rendered{Profile: profile, Err: err}
	if cfg != nil {
		e.CloudProvider = cfg.CloudProvider.Name
		if perr := e.setConfig(cfg); perr != nil {
			e.Err = fmt.Errorf("%w (and %w)", err, perr)
		}
	}
	return e
}

func (e *Rendered) setConfig(cfg *osm.OperatingSystemConfigSpec) error {
	data, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("failed to encode the rendered config: %w", err)
	}
	e.config, err = pack(data)
	return err
}

// Config returns the rendered config, with secrets redacted; it is empty when
// the output has none. The result is shared and must be treated as read-only.
func (e *Rendered) Config() (*osm.OperatingSystemConfigSpec, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.unpacked != nil {
		return e.unpacked, nil
	}
	cfg := &osm.OperatingSystemConfigSpec{}
	if e.config != nil {
		data, err := unpack(e.config)
		if err != nil {
			return nil, fmt.Errorf("failed to unpack the rendered config: %w", err)
		}
		if err := json.Unmarshal(data, cfg); err != nil {
			return nil, fmt.Errorf("failed to decode the rendered config: %w", err)
		}
	}
	e.unpacked, e.config = cfg, nil
	return cfg, nil
}

// PeekConfig returns the config as Config does, but leaves an output not
// unpacked yet as it is: for a reader of many outputs once (a review),
// which must not make the cache hold every config unpacked. The result is
// the caller's when it was unpacked for it, shared otherwise: read-only.
func (e *Rendered) PeekConfig() (*osm.OperatingSystemConfigSpec, error) {
	e.mu.Lock()
	unpacked, packed := e.unpacked, e.config
	e.mu.Unlock()
	if unpacked != nil {
		return unpacked, nil
	}
	cfg := &osm.OperatingSystemConfigSpec{}
	if packed != nil {
		data, err := unpack(packed)
		if err != nil {
			return nil, fmt.Errorf("failed to unpack the rendered config: %w", err)
		}
		if err := json.Unmarshal(data, cfg); err != nil {
			return nil, fmt.Errorf("failed to decode the rendered config: %w", err)
		}
	}
	return cfg, nil
}

// Payload is one rendered user-data.
type Payload struct {
	Format osm.PayloadFormat
	// Size is the length of the user-data in bytes.
	Size int64
	// SHA256 is the hex-encoded digest of the user-data.
	SHA256 string

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

// UserData returns the exact user-data.
func (p Payload) UserData() ([]byte, error) {
	if p.packed == nil {
		return nil, nil
	}
	data, err := unpack(p.packed)
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
