package format

import (
	"fmt"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// Spec is what a caller can require of a state: its layout and how URLs
// are signed. The zero Spec is the Bitmap layout over CRC32 (IEEE) of
// Safe-normalized URLs, the default.
type Spec struct {
	Layout    Layout
	Algorithm signature.Algorithm
	Mode      signature.Mode
}

// Default is what a state is created with when the caller names no Spec.
var Default = Spec{Layout: Bitmap, Algorithm: signature.IEEE, Mode: signature.Safe}

// String describes the spec for messages: "signature crc32, normalize
// safe", preceded by the layout when it is not Bitmap.
func (s Spec) String() string {
	d := fmt.Sprintf("signature %s, normalize %s", s.Algorithm, s.Mode)
	if s.Layout != Bitmap {
		d = fmt.Sprintf("layout %s, %s", s.Layout, d)
	}
	return d
}

// KeyedSpec returns the spec of a Keyed state normalizing in mode.
func KeyedSpec(mode signature.Mode) Spec {
	return Spec{Layout: Keyed, Algorithm: signature.SipHash, Mode: mode}
}

// Signer returns a new Signer for the spec's signature algorithm and
// normalization. A keyed spec's signer needs the state's key: use
// signature.NewKeyedSigner (state.State.Signer does).
func (s Spec) Signer() *signature.Signer { return signature.NewSigner(s.Algorithm, s.Mode) }
