package main

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// Charsets for the four forged bytes. Both leave out every byte that Safe
// normalization would change or that could change how the bytes before
// them are split or resolved: controls, space, non-ASCII, "%", "#", "?",
// "/", "." and the bytes that must be percent-encoded.
const (
	// charsetQuery is every other printable ASCII byte (81 of them): about
	// 1 solution in 100 is made of them.
	charsetQuery = "!$&'()*+,-0123456789:;=@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz~"
	// charsetUnreserved is RFC 3986's unreserved set but ".": a forged URL
	// that looks like any other (1 solution in 240).
	charsetUnreserved = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"
	// nonceChars fill the filler that varies the CRC before the four bytes
	// until they fall in the charset.
	nonceChars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	maxNonce   = 3 // 62³ + 62² + 62 + 1 ≈ 242,000 tries
)

var (
	errPrefix   = errors.New("prefix cannot be extended")
	errNotFound = errors.New("no forgery found")
)

// forgery is the result of forge.
type forgery struct {
	URL        string              // the forged URL: prefix + nonce + four bytes
	Normalized string              // what urldedupd signs for it
	Signature  signature.Signature // equal to the seen URL's
	Tries      int                 // nonces tried
}

// forge returns a URL starting with prefix whose signature (normalization,
// then CRC32 with alg) equals seen's, and whose normal form differs from
// seen's. It appends to prefix a short nonce (possibly empty) and four bytes
// from charset solved for by linear algebra: for a fixed polynomial, the
// CRC32 after four more bytes is an affine function of their 32 bits.
func forge(alg signature.Algorithm, mode signature.Mode, seen, prefix, charset string) (*forgery, error) {
	signer := signature.NewSigner(alg, mode)
	target, _ := signer.Sign([]byte(seen))
	seenNorm := normalized(signer, seen)
	tab := crcTable(alg)
	inv := inverse(tab)

	// Bytes appended to the prefix must come out at the end of its normal
	// form unchanged. A prefix without a path ("http://host") gets a "/".
	base, err := extensible(signer, prefix)
	if err != nil {
		return nil, err
	}
	baseNorm := normalized(signer, base)
	allowed := [256]bool{}
	for i := 0; i < len(charset); i++ {
		allowed[charset[i]] = true
	}
	nonce := make([]byte, 0, maxNonce)
	tries := 0
	for n := 0; n <= maxNonce; n++ {
		nonce = nonce[:n]
		for i := range nonce {
			nonce[i] = nonceChars[0]
		}
		for {
			tries++
			// The CRC of normalize(base+nonce+b) is the CRC of
			// normalize(base) continued over nonce and b.
			crc := crc32.Update(crc32.Checksum([]byte(baseNorm), tab), tab, nonce)
			b := solve(tab, inv, crc, uint32(target))
			if allowed[b[0]] && allowed[b[1]] && allowed[b[2]] && allowed[b[3]] {
				url := base + string(nonce) + string(b[:])
				if f, ok := check(signer, url, target, seenNorm); ok {
					f.Tries = tries
					return f, nil
				}
			}
			if !nextNonce(nonce) {
				break
			}
		}
	}
	return nil, fmt.Errorf("%w after %d tries (charset of %d bytes)", errNotFound, tries, len(charset))
}

// check signs url as urldedupd would and reports whether it is a forgery
// of target: same signature, valid, a different normal form.
func check(signer *signature.Signer, url string, target signature.Signature, seenNorm string) (*forgery, bool) {
	sig, ok := signer.Sign([]byte(url))
	norm := normalized(signer, url)
	if !ok || sig != target || norm == seenNorm {
		return nil, false
	}
	return &forgery{URL: url, Normalized: norm, Signature: sig}, true
}

// extensible returns prefix, or prefix+"/", such that appending bytes from
// the charsets appends them to its normal form unchanged.
func extensible(signer *signature.Signer, prefix string) (string, error) {
	const probe = "Az9~-_"
	for _, p := range []string{prefix, prefix + "/"} {
		if _, err := signer.Normalized([]byte(p)); err != nil {
			return "", fmt.Errorf("%w: %q does not normalize: %v", errPrefix, prefix, err)
		}
		want := normalized(signer, p) + probe
		if normalized(signer, p+probe) == want {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: bytes appended to %q do not stay at the end of its normal form", errPrefix, prefix)
}

func normalized(signer *signature.Signer, url string) string {
	norm, err := signer.Normalized([]byte(url))
	if err != nil {
		return url // signed on its raw bytes
	}
	return string(norm)
}

// nextNonce advances nonce to the next string of its length over
// nonceChars and reports false when it wraps around.
func nextNonce(nonce []byte) bool {
	for i := len(nonce) - 1; i >= 0; i-- {
		j := bytes.IndexByte([]byte(nonceChars), nonce[i])
		if j+1 < len(nonceChars) {
			nonce[i] = nonceChars[j+1]
			return true
		}
		nonce[i] = nonceChars[0]
	}
	return false
}

func crcTable(alg signature.Algorithm) *crc32.Table {
	if alg == signature.Castagnoli {
		return crc32.MakeTable(crc32.Castagnoli)
	}
	return crc32.IEEETable
}

// The CRC32 of a message continued by four bytes b is
// crc32.Update(crc, tab, b) = Update(crc, tab, 0000) XOR L(b), where L is
// linear over GF(2) in the 32 bits of b and does not depend on crc. L is
// invertible (a CRC of degree 32 tells any two 4-byte suffixes apart), so b
// = L⁻¹(target XOR Update(crc, tab, 0000)).

// linear returns L(b) for the 32 bits of b packed little-endian in x.
func linear(tab *crc32.Table, x uint32) uint32 {
	b := [4]byte{byte(x), byte(x >> 8), byte(x >> 16), byte(x >> 24)}
	var zero [4]byte
	return crc32.Update(0, tab, b[:]) ^ crc32.Update(0, tab, zero[:])
}

// inverse returns the columns of L⁻¹: inv[j] = L⁻¹(1<<j).
func inverse(tab *crc32.Table) [32]uint32 {
	// Gauss-Jordan on rows (L(e_k), e_k): reduce the left halves to unit
	// vectors, and the right halves are the preimages.
	var img, pre [32]uint32
	for k := 0; k < 32; k++ {
		img[k], pre[k] = linear(tab, 1<<k), 1<<k
	}
	for bit := 0; bit < 32; bit++ {
		p := -1
		for r := bit; r < 32; r++ {
			if img[r]>>bit&1 != 0 {
				p = r
				break
			}
		}
		if p < 0 {
			panic("crcforge: the CRC's 4-byte map is singular") // cannot happen for a degree-32 CRC
		}
		img[bit], img[p] = img[p], img[bit]
		pre[bit], pre[p] = pre[p], pre[bit]
		for r := 0; r < 32; r++ {
			if r != bit && img[r]>>bit&1 != 0 {
				img[r] ^= img[bit]
				pre[r] ^= pre[bit]
			}
		}
	}
	return pre // img[j] == 1<<j now, so pre[j] = L⁻¹(1<<j)
}

// solve returns the four bytes b with crc32.Update(crc, tab, b) == target.
func solve(tab *crc32.Table, inv [32]uint32, crc, target uint32) [4]byte {
	var zero [4]byte
	y := target ^ crc32.Update(crc, tab, zero[:])
	var x uint32
	for j := 0; j < 32; j++ {
		if y>>j&1 != 0 {
			x ^= inv[j]
		}
	}
	return [4]byte{byte(x), byte(x >> 8), byte(x >> 16), byte(x >> 24)}
}
