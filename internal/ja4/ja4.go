// Package ja4 computes JA4, the TLS client fingerprint of FoxIO
// (github.com/FoxIO-LLC/ja4, technical_details/JA4.md; JA4 for TLS
// clients is BSD-3-Clause), from a ClientHello parsed by internal/tlshello:
// "t13d1516h2_8daaf6152771_e5627efa2ab1". Suricata, Arkime, Wireshark and
// Zeek packages emit it, so analysts can join urldedupd's TLS and QUIC
// records with theirs and group clients by their TLS stack.
//
// A Hasher allocates nothing once its scratch list has grown to the
// longest hello seen.
package ja4

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"slices"

	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// Len is the length of a JA4 fingerprint.
const Len = 10 + 1 + 12 + 1 + 12

// The transports of JA4's first character.
const (
	TCP  = 't' // TLS over TCP
	QUIC = 'q'
	DTLS = 'd'
)

// The extensions JA4 leaves out of its extension hash: they are in its
// first part.
const (
	extServerName = 0x0000
	extALPN       = 0x0010
	extSigAlgs    = 0x000d
)

// Hasher computes fingerprints; it is not safe for concurrent use.
type Hasher struct {
	vals []uint16
	sha  hash.Hash
	sum  [sha256.Size]byte
	item [5]byte // one value's hex, with its comma
}

// Append appends the JA4 fingerprint of h, a ClientHello sent over
// transport (TCP, QUIC or DTLS), to dst.
func (x *Hasher) Append(dst []byte, transport byte, h *tlshello.Hello) []byte {
	if x.sha == nil {
		x.sha = sha256.New()
	}
	// a: transport, version, SNI, counts, ALPN.
	dst = append(dst, transport)
	dst = append(dst, version(h.Versions)...)
	nExt, sni := 0, false
	for l := h.Extensions; ; {
		typ, _, rest, ok := tlshello.NextExtension(l)
		if !ok {
			break
		}
		l = rest
		if tlshello.IsGREASE(typ) {
			continue
		}
		nExt++
		sni = sni || typ == extServerName
	}
	if sni {
		dst = append(dst, 'd')
	} else {
		dst = append(dst, 'i')
	}
	nCiphers := 0
	for i := 0; i+1 < len(h.CipherSuites); i += 2 {
		if !tlshello.IsGREASE(binary.BigEndian.Uint16(h.CipherSuites[i:])) {
			nCiphers++
		}
	}
	dst = appendCount(dst, nCiphers)
	dst = appendCount(dst, nExt)
	dst = appendALPN(dst, h.ALPN)
	dst = append(dst, '_')

	// b: the cipher suites, sorted.
	x.vals = x.vals[:0]
	for i := 0; i+1 < len(h.CipherSuites); i += 2 {
		if v := binary.BigEndian.Uint16(h.CipherSuites[i:]); !tlshello.IsGREASE(v) {
			x.vals = append(x.vals, v)
		}
	}
	dst = x.appendHash(dst, nil)
	dst = append(dst, '_')

	// c: the extensions but SNI and ALPN, sorted, then the signature
	// algorithms as sent.
	x.vals = x.vals[:0]
	var sigAlgs []byte
	for l := h.Extensions; ; {
		typ, data, rest, ok := tlshello.NextExtension(l)
		if !ok {
			break
		}
		l = rest
		if typ == extSigAlgs && len(data) >= 2 {
			if n := int(binary.BigEndian.Uint16(data)); n <= len(data)-2 {
				sigAlgs = data[2 : 2+n]
			}
		}
		if tlshello.IsGREASE(typ) || typ == extServerName || typ == extALPN {
			continue
		}
		x.vals = append(x.vals, typ)
	}
	return x.appendHash(dst, sigAlgs)
}

// appendHash sorts x.vals and appends the first 12 hex digits of the
// SHA-256 of their comma-separated 4-digit hex list, then, when sigAlgs
// has any, "_" and theirs in order; "000000000000" for an empty list.
func (x *Hasher) appendHash(dst []byte, sigAlgs []byte) []byte {
	if len(x.vals) == 0 {
		return append(dst, "000000000000"...)
	}
	slices.Sort(x.vals)
	x.sha.Reset()
	for i, v := range x.vals {
		x.sha.Write(hex4(&x.item, v, i > 0))
	}
	for i := 0; i+1 < len(sigAlgs); i += 2 {
		v := binary.BigEndian.Uint16(sigAlgs[i:])
		if i == 0 {
			x.sha.Write(underscore)
		}
		x.sha.Write(hex4(&x.item, v, i > 0))
	}
	sum := x.sha.Sum(x.sum[:0])
	var out [12]byte
	hex.Encode(out[:], sum[:6])
	return append(dst, out[:]...)
}

var underscore = []byte{'_'}

// hex4 writes v as 4 lower-case hex digits into item, after a comma when
// comma, and returns what it wrote.
func hex4(item *[5]byte, v uint16, comma bool) []byte {
	const digits = "0123456789abcdef"
	item[0] = ','
	item[1], item[2], item[3], item[4] = digits[v>>12], digits[v>>8&15], digits[v>>4&15], digits[v&15]
	if comma {
		return item[:]
	}
	return item[1:]
}

// version names the highest version offered (supported_versions, else
// the legacy version; GREASE left out), as JA4 does.
func version(versions []byte) string {
	best := uint16(0)
	for l := versions; ; {
		v, rest, ok := tlshello.NextVersion(l)
		if !ok {
			break
		}
		l = rest
		if !tlshello.IsGREASE(v) && rank(v) > rank(best) {
			best = v
		}
	}
	switch best {
	case 0x0304:
		return "13"
	case 0x0303:
		return "12"
	case 0x0302:
		return "11"
	case 0x0301:
		return "10"
	case 0x0300:
		return "s3"
	case 0x0002:
		return "s2"
	case 0xfeff:
		return "d1"
	case 0xfefd:
		return "d2"
	case 0xfefc:
		return "d3"
	}
	return "00"
}

// rank orders versions from oldest to newest (DTLS counts down).
func rank(v uint16) int {
	switch {
	case v == 0:
		return 0
	case v >= 0xfe00:
		return int(0xffff-v) + 1 // 0xfeff (1.0) < 0xfefd (1.2) < 0xfefc (1.3)
	}
	return int(v) + 1
}

// appendCount appends n as two digits, 99 at most.
func appendCount(dst []byte, n int) []byte {
	n = min(n, 99)
	return append(dst, byte('0'+n/10), byte('0'+n%10))
}

// appendALPN appends the first and last characters of the first ALPN
// protocol, "00" without one; when either is not an ASCII letter or digit,
// the first and last digits of the protocol's hex.
func appendALPN(dst, alpn []byte) []byte {
	name, _, ok := tlshello.NextProtocol(alpn)
	if !ok || len(name) == 0 {
		return append(dst, "00"...)
	}
	first, last := name[0], name[len(name)-1]
	if alnum(first) && alnum(last) {
		return append(dst, first, last)
	}
	const digits = "0123456789abcdef"
	return append(dst, digits[first>>4], digits[last&15])
}

func alnum(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }
