// Package communityid computes the Community ID flow hash, version 1
// (github.com/corelight/community-id-spec): the string, such as
// "1:LQU9qZlK+B5F3KDmev6m5PMibrg=", that Zeek, Suricata, Arkime and Elastic
// give a connection, the same in both directions, so that records of one
// flow from different tools can be joined on it.
//
// It covers the protocols with ports (TCP, UDP, SCTP): the records of
// urldedupd come from TCP and UDP (QUIC) flows. It allocates nothing.
package communityid

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"net/netip"
)

// The IP protocol numbers of the flows a Community ID is made for here.
const (
	TCP  = 6
	UDP  = 17
	SCTP = 132
)

// Len is the length of a version 1 Community ID: "1:" and 28 characters
// of base64.
const Len = 2 + 28

// Append appends the Community ID of the flow between src and dst over
// the IP protocol proto, with the seed (0 unless the tools agree on
// another), to dst: the same for both directions of the flow. An IPv4
// address mapped into IPv6 is taken as the IPv4 address.
func Append(b []byte, seed uint16, proto uint8, src, dst netip.AddrPort) []byte {
	sum := Sum(seed, proto, src, dst)
	var enc [28]byte
	base64.StdEncoding.Encode(enc[:], sum[:])
	b = append(b, "1:"...)
	return append(b, enc[:]...)
}

// Sum returns the SHA-1 the Community ID encodes (written in hex, it is
// the spec's form without base64).
func Sum(seed uint16, proto uint8, src, dst netip.AddrPort) [sha1.Size]byte {
	sa, da := src.Addr().Unmap(), dst.Addr().Unmap()
	sp, dp := src.Port(), dst.Port()
	var a, d [16]byte
	n := 4
	if sa.Is4() && da.Is4() {
		a4, d4 := sa.As4(), da.As4()
		copy(a[:], a4[:])
		copy(d[:], d4[:])
	} else {
		a, d, n = sa.As16(), da.As16(), 16
	}
	// The smaller endpoint first: by address, then by port.
	if c := bytes.Compare(a[:n], d[:n]); c > 0 || c == 0 && sp > dp {
		a, d, sp, dp = d, a, dp, sp
	}
	var in [2 + 16 + 16 + 2 + 4]byte
	binary.BigEndian.PutUint16(in[:], seed)
	k := 2 + copy(in[2:], a[:n])
	k += copy(in[k:], d[:n])
	in[k], in[k+1] = proto, 0
	binary.BigEndian.PutUint16(in[k+2:], sp)
	binary.BigEndian.PutUint16(in[k+4:], dp)
	return sha1.Sum(in[:k+6])
}
