package keyed

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"

	"github.com/dchest/siphash"

	"github.com/urldedupd/urldedupd/pkg/signature"
)

// KeySize is the size of a Key in bytes.
const KeySize = 16

// A Key is the secret SipHash key of a state. Whoever knows it can forge
// collisions; keep it like a password (mode 0600, never printed).
type Key [KeySize]byte

// NewKey returns a random key from crypto/rand.
func NewKey() (Key, error) {
	var k Key
	if _, err := rand.Read(k[:]); err != nil {
		return k, fmt.Errorf("keyed: new key: %w", err)
	}
	return k, nil
}

// ParseKey returns the key held in b, which must be exactly KeySize bytes.
func ParseKey(b []byte) (Key, error) {
	var k Key
	if len(b) != KeySize {
		return k, fmt.Errorf("%w: %d bytes, want %d", ErrKey, len(b), KeySize)
	}
	copy(k[:], b)
	return k, nil
}

// A Hasher hashes URLs under a key after normalization. It keeps the
// normalizer's scratch buffer and is not safe for concurrent use; give each
// goroutine its own.
type Hasher struct {
	k0, k1 uint64
	signer *signature.Signer
}

// NewHasher returns a Hasher for key k that normalizes in mode.
func NewHasher(k Key, mode signature.Mode) *Hasher {
	return &Hasher{
		k0:     binary.LittleEndian.Uint64(k[:8]),
		k1:     binary.LittleEndian.Uint64(k[8:]),
		signer: signature.NewSigner(signature.IEEE, mode),
	}
}

// Sum returns the keyed hash of url's normal form. When url cannot be
// normalized it hashes the raw bytes and reports ok == false, as
// signature.Signer.Sign does, so the caller can count it.
func (h *Hasher) Sum(url []byte) (sum uint64, ok bool) {
	norm, err := h.signer.Normalized(url)
	if err != nil {
		return h.SumNormalized(url), false
	}
	return h.SumNormalized(norm), true
}

// SumNormalized returns the keyed hash of b as it is, without normalizing.
func (h *Hasher) SumNormalized(b []byte) uint64 { return siphash.Hash(h.k0, h.k1, b) }
