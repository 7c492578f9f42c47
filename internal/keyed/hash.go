package keyed

import (
	"crypto/rand"
	"fmt"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// KeySize is the size of a Key in bytes.
const KeySize = signature.KeySize

// A Key is the secret SipHash key of a state. Whoever knows it can forge
// collisions; keep it like a password (mode 0600, never printed).
type Key = signature.Key

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

// A Hasher hashes URLs under a key after normalization: a
// signature.Signer for signature.SipHash. It keeps the normalizer's scratch
// buffer and is not safe for concurrent use; give each goroutine its own.
type Hasher struct {
	signer *signature.Signer
	raw    *signature.Signer // mode None: hashes bytes as they are
}

// NewHasher returns a Hasher for key k that normalizes in mode.
func NewHasher(k Key, mode signature.Mode) *Hasher {
	return &Hasher{signer: signature.NewKeyedSigner(k, mode), raw: signature.NewKeyedSigner(k, signature.None)}
}

// Sum returns the keyed hash of url's normal form. When url cannot be
// normalized it hashes the raw bytes and reports ok == false, as
// signature.Signer.Sign does, so the caller can count it.
func (h *Hasher) Sum(url []byte) (sum uint64, ok bool) {
	s, ok := h.signer.Sign(url)
	return uint64(s), ok
}

// SumNormalized returns the keyed hash of b as it is, without normalizing.
func (h *Hasher) SumNormalized(b []byte) uint64 {
	s, _ := h.raw.Sign(b)
	return uint64(s)
}
