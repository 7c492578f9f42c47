package decode

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
)

// EncapLayer is one encapsulation a frame came through, outside in.
type EncapLayer uint8

const (
	EncapVLAN     EncapLayer = iota + 1 // an 802.1Q tag
	EncapQinQ                           // an 802.1ad (or old 0x9100) service tag
	EncapPPPoE                          // a PPPoE session
	EncapMPLS                           // an MPLS label stack
	EncapEthernet                       // an Ethernet frame inside another encapsulation (a pseudowire, a tunnel)
	EncapLLC                            // an 802.3 length frame with LLC/SNAP
	EncapIPIP                           // IPv4 in IPv4
	Encap6in4                           // IPv6 in IPv4
	Encap4in6                           // IPv4 in IPv6
	Encap6in6                           // IPv6 in IPv6
	EncapGRE                            // GRE
	EncapERSPAN                         // ERSPAN (over GRE)
	EncapVXLAN                          // VXLAN (UDP)
	EncapGeneve                         // Geneve (UDP)
	EncapGTP                            // GTP-U (UDP)
	EncapTeredo                         // Teredo (UDP)
	EncapAYIYA                          // AYIYA (UDP)
)

var encapNames = [...]string{"", "vlan", "qinq", "pppoe", "mpls", "ethernet", "llc",
	"ipip", "6in4", "4in6", "6in6", "gre", "erspan", "vxlan", "geneve", "gtp", "teredo", "ayiya"}

func (l EncapLayer) String() string {
	if int(l) < len(encapNames) {
		return encapNames[l]
	}
	return "?"
}

// MaxEncap is the most encapsulation layers a frame may have: a frame with
// more is counted as undecoded ("encapsulation deeper than 8").
const MaxEncap = 8

// Encap is the encapsulation a request came through: empty for plain
// Ethernet (or SLL, raw IP, loopback). Fixed in size: copied, not
// allocated.
type Encap struct {
	n      uint8
	layers [MaxEncap]EncapLayer
}

// Plain reports whether there was no encapsulation.
func (e *Encap) Plain() bool { return e.n == 0 }

// Layers returns the layers, outside in (a slice of e).
func (e *Encap) Layers() []EncapLayer { return e.layers[:e.n] }

// push adds a layer; false when there are MaxEncap already.
func (e *Encap) push(l EncapLayer) bool {
	if e.n == MaxEncap {
		return false
	}
	e.layers[e.n] = l
	e.n++
	return true
}

// AppendTo appends the layers joined by "/" ("vlan", "qinq/vlan",
// "mpls/ethernet"), allocating nothing when b has room.
func (e *Encap) AppendTo(b []byte) []byte {
	for i, l := range e.Layers() {
		if i > 0 {
			b = append(b, '/')
		}
		b = append(b, l.String()...)
	}
	return b
}

func (e Encap) String() string { return string(e.AppendTo(nil)) }

// NewEncap returns the encapsulation of the given layers, outside in (at
// most MaxEncap: further ones are left out). For tests and tools; the
// Decoder builds its own without allocating.
func NewEncap(ls ...EncapLayer) Encap {
	var e Encap
	for _, l := range ls {
		e.push(l)
	}
	return e
}

// The encapsulation path: what tells apart two tenants, VLANs or tunnels
// that reuse the same inner addresses. A connection direction and an IP
// datagram in reassembly are keyed by their addresses and their path, as
// Zeek and Suricata key theirs, so that one tenant's segments and
// fragments are never taken for retransmissions or copies of another's.
//
// The Decoder writes, as it walks the layers outside in, the fields that
// identify each one and are the same both ways: a VLAN or service tag's
// VLAN ID, a PPPoE session ID, a VXLAN or Geneve VNI, a GRE key, an ERSPAN
// session ID, and the two endpoints of every IP header that carries a
// tunnel (IP in IP, GRE, a UDP tunnel), in a fixed order, not as source and
// destination. Fields that differ by direction or by hop (MPLS labels, GTP
// TEIDs, UDP source ports) and layers without identity (Ethernet, LLC)
// are left out. The path is those bytes hashed with a seed chosen when the
// process starts (so that no sender can make two paths collide on
// purpose): a fixed-size, comparable value, 0 for a frame without
// identifying encapsulation.

// pathMax is the bytes of path identity kept before they are folded into
// a hash: enough for MaxEncap layers of the longest (IPv6 endpoints and a
// key), so that folding is only a guard.
const pathMax = MaxEncap * 40

var pathSeed = maphash.MakeSeed()

// Path tags: an EncapLayer for the fields of a layer, or one of these for
// the endpoints of a tunnel's IP header.
const (
	pathIPv4 = 0x80 | 4
	pathIPv6 = 0x80 | 6
	pathFold = 0xff
)

// encapPath collects a frame's path identity without allocating.
type encapPath struct {
	n int
	b [pathMax]byte
}

// reserve returns room for n more bytes, folding what is held into its
// hash when there is not enough.
func (p *encapPath) reserve(n int) []byte {
	if p.n+n > len(p.b) {
		h := maphash.Bytes(pathSeed, p.b[:p.n])
		p.b[0] = pathFold
		binary.BigEndian.PutUint64(p.b[1:], h)
		p.n = 9
	}
	p.n += n
	return p.b[p.n-n : p.n]
}

// field adds a layer's identity: tag, then v's low size bytes.
func (p *encapPath) field(tag EncapLayer, v uint32, size int) {
	b := p.reserve(1 + size)
	b[0] = byte(tag)
	for i := size; i > 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}

// endpoints adds a tunnel's IP endpoints, the lower first, so that both
// directions have the same path.
func (p *encapPath) endpoints(a, b []byte) {
	tag := byte(pathIPv4)
	if len(a) == 16 {
		tag = pathIPv6
	}
	if bytes.Compare(a, b) > 0 {
		a, b = b, a
	}
	r := p.reserve(1 + 2*len(a))
	r[0] = tag
	copy(r[1+copy(r[1:], a):], b)
}

// sum is the path: 0 when nothing identifying was met.
func (p *encapPath) sum() uint64 {
	if p.n == 0 {
		return 0
	}
	return maphash.Bytes(pathSeed, p.b[:p.n])
}
