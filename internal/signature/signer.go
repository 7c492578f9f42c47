package signature

import (
	"encoding/binary"
	"hash/crc32"
)

// Signer signs URLs with one algorithm and normalization mode.
//
// A Signer keeps a scratch buffer for normalization and is not safe for
// concurrent use; give each goroutine its own. The zero value signs with
// [IEEE] and [Safe].
type Signer struct {
	alg    Algorithm
	mode   Mode
	k0, k1 uint64 // SipHash's key
	buf    []byte
}

// NewSigner returns a Signer for the given algorithm and mode. For SipHash
// it signs with the zero key, which is no secret; use NewKeyedSigner.
func NewSigner(alg Algorithm, mode Mode) *Signer {
	return &Signer{alg: alg, mode: mode, buf: make([]byte, 0, 256)}
}

// NewKeyedSigner returns a Signer that signs with SipHash-1-3 under key k
// after normalizing in mode.
func NewKeyedSigner(k Key, mode Mode) *Signer {
	s := NewSigner(SipHash, mode)
	s.k0, s.k1 = binary.LittleEndian.Uint64(k[:8]), binary.LittleEndian.Uint64(k[8:])
	return s
}

// sum hashes b with the signer's algorithm (and key).
func (s *Signer) sum(b []byte) Signature {
	if s.alg == SipHash {
		return Signature(SipHash13(s.k0, s.k1, b))
	}
	return Signature(crc32.Checksum(b, s.alg.table()))
}

// Algorithm returns the signer's hash algorithm.
func (s *Signer) Algorithm() Algorithm { return s.alg }

// Mode returns the signer's normalization mode.
func (s *Signer) Mode() Mode { return s.mode }

// Sign returns the signature of url after normalization. When url cannot be
// normalized, Sign signs its raw bytes and reports ok == false, so the caller
// can count it; such a URL is still de-duplicated, only not with its
// equivalent spellings.
func (s *Signer) Sign(url []byte) (sig Signature, ok bool) {
	if s.mode == None {
		return s.sum(url), true
	}
	norm, err := s.normalize(url)
	if err != nil {
		return s.sum(url), false
	}
	return s.sum(norm), true
}

// Normalized returns the form of url that Sign hashes. The result aliases
// the Signer's buffer (or url itself) and is valid until the next call.
func (s *Signer) Normalized(url []byte) ([]byte, error) {
	if s.mode == None {
		return url, nil
	}
	return s.normalize(url)
}

func (s *Signer) normalize(url []byte) ([]byte, error) {
	if isCanonical(url) {
		return url, nil
	}
	out, err := appendNormalized(s.buf[:0], url)
	if cap(out) > cap(s.buf) {
		s.buf = out[:0]
	}
	return out, err
}
