package rendercache

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// Entry is the rendered result for one MachineDeployment under one set of inputs.
// Entries are shared between requests and must be treated as read-only.
type Entry struct {
	// Config is the rendered configuration with tokens and other secrets redacted.
	Config osm.OperatingSystemConfigSpec
	// Profile is the OperatingSystemProfile the entry was rendered from.
	Profile osm.ProfileReference
	// Bootstrap and Provisioning are the exact user-data the Secrets hold.
	Bootstrap, Provisioning Payload
	// Err is set when rendering failed; the other fields are then empty except
	// Profile, as far as it was resolved.
	Err error
}

// Payload is one rendered user-data.
type Payload struct {
	Format osm.PayloadFormat
	// UserData is kept as a string so that serving it copies nothing.
	UserData string
	// SHA256 is the hex-encoded digest of UserData.
	SHA256 string
}

// NewPayload returns the payload for data, with its digest.
func NewPayload(format osm.PayloadFormat, data []byte) Payload {
	sum := sha256.Sum256(data)
	return Payload{Format: format, UserData: string(data), SHA256: hex.EncodeToString(sum[:])}
}

// Payload returns the bootstrap or provisioning payload.
func (e *Entry) Payload(kind osm.PayloadType) Payload {
	if kind == osm.PayloadTypeBootstrap {
		return e.Bootstrap
	}
	return e.Provisioning
}
