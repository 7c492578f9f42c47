// Package decode turns captured frames into TCP segments (and the UDP
// datagrams its caller claims, QUIC for package capture) without
// allocating: link types (Ethernet, Linux cooked, loopback, raw IP,
// 802.11 behind radio headers, NFLOG, PPP), layer-2 encapsulations
// (VLAN, QinQ, PPPoE, MPLS, LLC/SNAP), IPv4 and IPv6 with their extension
// headers, tunnels (IP in IP, GRE, ERSPAN, and VXLAN, Geneve, GTP-U,
// Teredo, AYIYA on their UDP ports) and IP fragments (reassembled within
// DefragOptions' bounds).
//
// A Decoder fills a Segment from each frame: its addresses, flags and
// payload (aliasing the frame), its encapsulation (Encap) and an identity
// of its encapsulation path, so that tenants reusing addresses are kept
// apart. A frame that carries no TCP segment is counted by Reason. It
// knows no application protocol.
package decode
