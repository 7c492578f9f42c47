package respserver

import (
	"bytes"
	"fmt"

	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// Separator is the byte between a key and an item when the key enters
// the signature (every key but Options.DefaultKey). Normalization
// percent-encodes every byte up to 0x20, so a normalized URL never holds
// it, and the server refuses keys and items that do: a namespaced item's
// signed bytes never equal another key's, nor a URL as the default key,
// filter, the sensor and the HTTP API sign it.
const Separator = 0x00

// signer signs a command's items for the state, by key.
type signer struct {
	url        *signature.Signer // the state's: normalizes, then hashes
	raw        *signature.Signer // the same hash of the bytes as given
	defaultKey string
	maxItem    int
	scratch    []byte // key, Separator, normalized item
}

func newSigner(st *state.State, defaultKey string, maxItem int) *signer {
	s := &signer{url: st.Signer(), defaultKey: defaultKey, maxItem: maxItem}
	m := st.Meta()
	if k := st.Key(); k != nil {
		s.raw = signature.NewKeyedSigner(*k, signature.None)
	} else {
		s.raw = signature.NewSigner(m.Spec.Algorithm, signature.None)
	}
	return s
}

// checkKey returns the error reply for a key the server does not take,
// or "".
func checkKey(key []byte) string {
	if bytes.IndexByte(key, Separator) >= 0 {
		return "ERR a key may not hold a NUL byte"
	}
	return ""
}

// checkItem returns the error reply for the i-th item (from 1; 0 for a
// command of one item) if the state cannot take it, or "".
func (s *signer) checkItem(i int, item []byte) string {
	what := func() string {
		if i > 0 {
			return fmt.Sprintf("item %d", i)
		}
		return "the item"
	}
	switch {
	case signature.Blank(item):
		return "ERR " + what() + " is empty"
	case len(item) > s.maxItem:
		return fmt.Sprintf("ERR %s is %d bytes, over the limit of %d", what(), len(item), s.maxItem)
	case bytes.IndexByte(item, Separator) >= 0:
		return "ERR " + what() + " holds a NUL byte"
	}
	return ""
}

// sign returns the signature of item under key: under the default key,
// exactly the URL's signature (the state's normalization and hash); under
// any other, the hash of key, Separator and the normalized item (the item
// itself when it does not normalize, as Signer.Sign then signs the raw
// bytes).
func (s *signer) sign(key, item []byte) signature.Signature {
	if string(key) == s.defaultKey {
		sig, _ := s.url.Sign(item)
		return sig
	}
	norm, err := s.url.Normalized(item)
	if err != nil {
		norm = item
	}
	s.scratch = append(append(append(s.scratch[:0], key...), Separator), norm...)
	sig, _ := s.raw.Sign(s.scratch)
	return sig
}
