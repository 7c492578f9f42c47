package decode

import "fmt"

// ReasonKind says where the Decoder stopped reading a frame that carried
// no TCP segment.
type ReasonKind uint8

const (
	// ReasonLinkType: a link type this package does not decode. The frame
	// was not read at all.
	ReasonLinkType ReasonKind = iota + 1
	// ReasonEtherType: an EtherType (or Linux cooked capture protocol)
	// this package does not decode; the frame may carry IP inside it.
	ReasonEtherType
	// ReasonFamily: a BSD loopback (NULL/LOOP) address family not decoded.
	ReasonFamily
	// ReasonNonIP: an EtherType of a protocol that carries no IP (ARP,
	// LLDP, 802.1X, ...): read, counted as other, not an error.
	ReasonNonIP
	// ReasonIPProtocol: an IP protocol other than TCP (ICMP, UDP, ...):
	// read, counted as other, not an error.
	ReasonIPProtocol
	// ReasonPPP: a PPP protocol (in a PPPoE session): control protocols
	// (LCP, IPCP, ...) are other, the rest undecoded.
	ReasonPPP
	// ReasonEncapDepth: more than MaxEncap encapsulations (undecoded).
	ReasonEncapDepth
	// ReasonTunnel: a tunnel's content not decoded (GRE version 1, a
	// VXLAN header without its I flag ...); Code is the EncapLayer. Its
	// signalling (GTP echo, Teredo bubbles) is other.
	ReasonTunnel
	// ReasonTunnelSignal: a tunnel's own messages, no user data (GTP echo,
	// a Teredo bubble, an AYIYA heartbeat): other. Code is the EncapLayer.
	ReasonTunnelSignal
	// ReasonWLAN: an 802.11 frame without data (Code: the frame type,
	// 0 management, 1 control, 2 null data): other.
	ReasonWLAN
	// ReasonWLANProtected: an encrypted 802.11 data frame: undecoded.
	ReasonWLANProtected
	// ReasonNoPacket: a link-layer record that carries no packet (an NFLOG
	// message without its payload): other.
	ReasonNoPacket
	// ReasonTunnelPort: a UDP datagram on a tunnel's port that was not read
	// as the tunnel (Code: the EncapLayer tried): QUIC (to the tunnel's
	// port, when it did not decode as the tunnel; from it, whenever it
	// looks like QUIC), or, from the tunnel's port, a datagram that did not
	// decode as the tunnel (plain UDP). Other: not an error.
	ReasonTunnelPort
	// ReasonTunnelContent: a UDP datagram on no tunnel's port whose start
	// is a tunnel's header (Code: the EncapLayer) but whose inside is not
	// a whole IP packet, or did not decode as one: tried as the tunnel by
	// content and rejected, read as plain UDP. Other: not an error.
	ReasonTunnelContent
)

// Reason is why a frame carried no TCP segment: a kind and its number (the
// link type, EtherType, family or IP protocol).
type Reason struct {
	Kind ReasonKind
	Code uint32
}

// Undecoded reports whether frames of this reason were not read (the
// Decoder does not know their format), as opposed to read and found to
// carry something other than TCP.
func (r Reason) Undecoded() bool {
	switch r.Kind {
	case ReasonLinkType, ReasonEtherType, ReasonFamily, ReasonEncapDepth, ReasonTunnel, ReasonWLANProtected:
		return true
	case ReasonPPP:
		return r.Code < 0x8000
	}
	return false
}

// String names the reason as tshark users know it, e.g.
// "link type 127 (IEEE 802.11 radiotap)" or "EtherType 0x8864 (PPPoE session)".
func (r Reason) String() string {
	var s, name string
	switch r.Kind {
	case ReasonLinkType:
		s, name = fmt.Sprintf("link type %d", r.Code), linkTypeNames[r.Code]
	case ReasonEtherType, ReasonNonIP:
		s, name = fmt.Sprintf("EtherType 0x%04x", r.Code), etherTypeNames[r.Code]
		if r.Code == 0 {
			s, name = "802.3 LLC", ""
		}
	case ReasonFamily:
		s = fmt.Sprintf("loopback address family %d", r.Code)
	case ReasonIPProtocol:
		s, name = fmt.Sprintf("IP protocol %d", r.Code), ipProtocolNames[r.Code]
	case ReasonPPP:
		s = fmt.Sprintf("PPP protocol 0x%04x", r.Code)
	case ReasonEncapDepth:
		s = fmt.Sprintf("encapsulation deeper than %d layers", r.Code)
	case ReasonTunnel:
		s = "tunnel " + EncapLayer(r.Code).String()
	case ReasonTunnelSignal:
		s = "tunnel " + EncapLayer(r.Code).String() + " signalling"
	case ReasonWLAN:
		s = [...]string{"802.11 management", "802.11 control", "802.11 null data", "802.11 extension"}[r.Code&3]
	case ReasonWLANProtected:
		s = "802.11 protected (encrypted) data"
	case ReasonNoPacket:
		s = "NFLOG without a packet"
	case ReasonTunnelPort:
		s = "UDP on the " + EncapLayer(r.Code).String() + " port, not " + EncapLayer(r.Code).String()
	case ReasonTunnelContent:
		s = "UDP tried as " + EncapLayer(r.Code).String() + " by content, not " + EncapLayer(r.Code).String()
	default:
		return fmt.Sprintf("reason %d/%d", r.Kind, r.Code)
	}
	if name != "" {
		s += " (" + name + ")"
	}
	return s
}

// Label is a short stable form of the reason for metrics labels:
// "linktype:127", "ethertype:0x8864", "family:7", "ipproto:1".
func (r Reason) Label() string {
	switch r.Kind {
	case ReasonLinkType:
		return fmt.Sprintf("linktype:%d", r.Code)
	case ReasonEtherType, ReasonNonIP:
		return fmt.Sprintf("ethertype:0x%04x", r.Code)
	case ReasonFamily:
		return fmt.Sprintf("family:%d", r.Code)
	case ReasonIPProtocol:
		return fmt.Sprintf("ipproto:%d", r.Code)
	case ReasonPPP:
		return fmt.Sprintf("ppp:0x%04x", r.Code)
	case ReasonEncapDepth:
		return "depth"
	case ReasonTunnel:
		return "tunnel:" + EncapLayer(r.Code).String()
	case ReasonTunnelSignal:
		return "signal:" + EncapLayer(r.Code).String()
	case ReasonWLAN:
		return fmt.Sprintf("wlan:%d", r.Code)
	case ReasonWLANProtected:
		return "wlan:protected"
	case ReasonNoPacket:
		return "nopacket"
	case ReasonTunnelPort:
		return "tunnelport:" + EncapLayer(r.Code).String()
	case ReasonTunnelContent:
		return "tunnelcontent:" + EncapLayer(r.Code).String()
	}
	return fmt.Sprintf("%d:%d", r.Kind, r.Code)
}

// ReasonCount is how many frames had a reason.
type ReasonCount struct {
	Reason
	Frames uint64
}

// MaxReasons is the number of distinct reasons counted one by one; frames
// of further reasons are counted together (Reasons.LumpedUndecoded,
// Reasons.LumpedOther). The table is fixed in size: counting allocates
// nothing.
const MaxReasons = 16

// Reasons count the frames that carried no TCP segment by reason, in the
// order the reasons were first met.
type Reasons struct {
	counts [MaxReasons]ReasonCount
	n      int
	// LumpedUndecoded and LumpedOther count the frames of reasons met
	// after MaxReasons others were.
	LumpedUndecoded, LumpedOther uint64
}

// add counts n frames of reason r.
func (t *Reasons) Add(r Reason, n uint64) {
	if r.Kind == 0 {
		return
	}
	for i := range t.n {
		if t.counts[i].Reason == r {
			t.counts[i].Frames += n
			return
		}
	}
	switch {
	case t.n < MaxReasons:
		t.counts[t.n] = ReasonCount{r, n}
		t.n++
	case r.Undecoded():
		t.LumpedUndecoded += n
	default:
		t.LumpedOther += n
	}
}

// Counts returns the reasons counted one by one (a slice of t: valid while
// t is).
func (t *Reasons) Counts() []ReasonCount { return t.counts[:t.n] }

// Merge adds o's counts to t's.
func (t *Reasons) Merge(o *Reasons) {
	for _, c := range o.Counts() {
		t.Add(c.Reason, c.Frames)
	}
	t.LumpedUndecoded += o.LumpedUndecoded
	t.LumpedOther += o.LumpedOther
}

// Undecoded is the number of frames not read, of every reason.
func (t *Reasons) Undecoded() uint64 {
	n := t.LumpedUndecoded
	for _, c := range t.Counts() {
		if c.Undecoded() {
			n += c.Frames
		}
	}
	return n
}

// Describe says what was not decoded, one sentence per reason, e.g.
// "26 frames of link type 127 (IEEE 802.11 radiotap) were not decoded";
// nil when every frame was.
func (t *Reasons) Describe() []string {
	var out []string
	for _, c := range t.Counts() {
		if c.Undecoded() {
			out = append(out, fmt.Sprintf("%d %s of %s %s not decoded", c.Frames, plural(c.Frames, "frame", "frames"), c.Reason, plural(c.Frames, "was", "were")))
		}
	}
	if t.LumpedUndecoded > 0 {
		out = append(out, fmt.Sprintf("%d %s of further link types or protocols %s not decoded", t.LumpedUndecoded,
			plural(t.LumpedUndecoded, "frame", "frames"), plural(t.LumpedUndecoded, "was", "were")))
	}
	return out
}

func plural(n uint64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// linkTypeNames name the link types met on capture boxes (tcpdump.org's
// LINKTYPE_ list), decoded or not.
var linkTypeNames = map[uint32]string{
	0: "BSD loopback", 1: "Ethernet", 6: "Token Ring", 8: "SLIP", 9: "PPP", 10: "FDDI",
	50: "PPP in HDLC framing", 51: "PPPoE", 101: "raw IP", 104: "Cisco HDLC", 105: "IEEE 802.11",
	107: "Frame Relay", 108: "OpenBSD loopback", 113: "Linux cooked capture", 117: "OpenBSD pflog",
	119: "IEEE 802.11 Prism", 122: "IP over Fibre Channel", 127: "IEEE 802.11 radiotap",
	138: "Apple IP over IEEE 1394", 139: "SS7 MTP2", 143: "DOCSIS", 163: "IEEE 802.11 AVS",
	187: "Bluetooth HCI H4", 189: "Linux USB", 192: "PPI", 195: "IEEE 802.15.4", 197: "Endace ERF",
	201: "Bluetooth HCI H4 with direction", 204: "PPP with direction", 215: "IEEE 802.15.4 without FCS",
	220: "Linux USB memory-mapped", 228: "raw IPv4", 229: "raw IPv6", 239: "NFLOG", 240: "netANALYZER",
	249: "USB/IP", 253: "IP over InfiniBand", 254: "SCTP", 263: "Docsis 3.1", 276: "Linux cooked capture v2",
	288: "Ethernet with MACsec", 147: "user 0", 148: "user 1", 149: "user 2",
}

// etherTypeNames name the EtherTypes met on mirror ports.
var etherTypeNames = map[uint32]string{
	0x0800: "IPv4", 0x0806: "ARP", 0x22eb: "ERSPAN type III", 0x22f0: "AVTP", 0x6558: "transparent Ethernet bridging",
	0x8035: "RARP", 0x809b: "AppleTalk", 0x80f3: "AARP", 0x8100: "802.1Q VLAN", 0x8137: "IPX",
	0x86dd: "IPv6", 0x8808: "Ethernet flow control", 0x8809: "slow protocols (LACP)", 0x8847: "MPLS",
	0x8848: "MPLS multicast", 0x8863: "PPPoE discovery", 0x8864: "PPPoE session", 0x886d: "Intel ANS",
	0x888e: "802.1X EAPOL", 0x8892: "PROFINET", 0x88a8: "802.1ad QinQ", 0x88b8: "GOOSE", 0x88be: "ERSPAN",
	0x88cc: "LLDP", 0x88e5: "MACsec", 0x88e7: "802.1ah PBB", 0x88f7: "PTP", 0x8902: "CFM", 0x8906: "FCoE",
	0x8914: "FCoE initialization", 0x8915: "RoCE", 0x893a: "IEEE 1905", 0x9000: "Ethernet loopback",
	0x9100: "QinQ (old)", 0x0004: "802.2 LLC (Linux cooked)", 0x88b5: "local experimental 1", 0x88b6: "local experimental 2",
}

// nonIPEtherTypes are the EtherTypes of protocols that carry no IP: frames
// of them are "other", not undecoded.
func nonIPEtherType(t uint16) bool {
	switch t {
	case 0x0806, 0x8035, 0x809b, 0x80f3, 0x8137, 0x8808, 0x8809, 0x8863, 0x888e, 0x8892, 0x88b8,
		0x88cc, 0x88f7, 0x8902, 0x8906, 0x8914, 0x8915, 0x893a, 0x9000, 0x22f0:
		return true
	}
	return false
}

// ipProtocolNames name the common IP protocols.
var ipProtocolNames = map[uint32]string{
	0: "IPv6 hop-by-hop options", 1: "ICMP", 2: "IGMP", 4: "IPv4 in IP", 6: "TCP", 17: "UDP",
	41: "IPv6 in IP", 43: "IPv6 routing header", 44: "IPv6 fragment", 47: "GRE", 50: "ESP", 51: "AH",
	58: "ICMPv6", 59: "IPv6 no next header", 60: "IPv6 destination options", 89: "OSPF", 103: "PIM",
	112: "VRRP", 115: "L2TP", 132: "SCTP", 137: "MPLS in IP",
}
