package capture

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
// decoder builds its own without allocating.
func NewEncap(ls ...EncapLayer) Encap {
	var e Encap
	for _, l := range ls {
		e.push(l)
	}
	return e
}
