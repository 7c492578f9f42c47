package capture

import (
	"encoding/binary"
	"github.com/urldedupd/urldedupd/internal/capture/decode"
	"net/netip"
	"strconv"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// quicFrames reads one of internal/quic's captures of quic-go (raw IPv4, the
// client's port 54982, the server's 443) with the client's port, or the
// server's, moved to port, the UDP checksum left out (0: none, RFC 768).
func quicFrames(t *testing.T, name string, client bool, port uint16) []Packet {
	t.Helper()
	src, err := OpenFiles(quicCapture(name))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []Packet
	for {
		var p Packet
		if src.Next(&p) != nil {
			break
		}
		b := append([]byte(nil), p.Data...)
		udp := b[int(b[0]&15)*4:]
		from := uint16(443)
		if client {
			from = 54982
		}
		for _, off := range []int{0, 2} {
			if binary.BigEndian.Uint16(udp[off:]) == from {
				binary.BigEndian.PutUint16(udp[off:], port)
			}
		}
		udp[6], udp[7] = 0, 0
		out = append(out, Packet{Data: b, Link: p.Link, Info: p.Info})
	}
	if len(out) == 0 {
		t.Fatal("no frames")
	}
	return out
}

// A QUIC client sending its Initial from a UDP tunnel's port, or to a
// server on one, cannot hide its server name: the datagram is read as
// QUIC, counted (quic_tunnel_port, and the frame's reason
// "tunnelport:KIND"). It was taken for the tunnel and counted only as not
// decoded (or malformed).
func TestQUICOnTunnelPorts(t *testing.T) {
	for _, tun := range DefaultUDPTunnels {
		for _, client := range []bool{true, false} {
			name, want := "from "+strconv.Itoa(int(tun.Port)), "https://a.example/"
			if !client {
				name, want = "to "+strconv.Itoa(int(tun.Port)), "https://a.example:"+strconv.Itoa(int(tun.Port))+"/"
			}
			t.Run(name, func(t *testing.T) {
				var got []string
				e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)+" "+r.Encap.String()) })
				frames := quicFrames(t, "v1", client, tun.Port)
				for i := range frames {
					e.Packet(&frames[i])
				}
				st := e.Stats()
				// Read as QUIC, a frame is counted once: as QUIC on a
				// tunnel's port (quic_tunnel_port), not as another frame.
				var tried uint64
				for _, c := range st.Reasons.Counts() {
					if c.Reason == (Reason{Kind: decode.ReasonTunnelPort, Code: uint32(tun.Kind)}) {
						tried = c.Frames
						if c.Undecoded() || c.Label() != "tunnelport:"+tun.Kind.String() {
							t.Errorf("reason %v (%s), undecoded %v", c.Reason, c.Label(), c.Undecoded())
						}
					}
				}
				if len(got) != 1 || got[0] != want+" " || st.QUIC.Hellos != 1 || st.QUIC.TunnelPort == 0 || tried != 0 || st.QUICFrames < st.QUIC.TunnelPort {
					t.Errorf("records %q, want [%q]; quic %+v; frames counted tunnelport:%s %d; quic frames %d, other %d of %d", got, want+" ", st.QUIC, tun.Kind, tried, st.QUICFrames, st.Other, st.Packets)
				}
				i := 0 // the same datagrams again: late, from the server; tried as the tunnel and as QUIC without allocating
				if n := testing.AllocsPerRun(50, func() { e.Packet(&frames[i%len(frames)]); i++ }); n != 0 {
					t.Errorf("%v allocations per datagram", n)
				}
			})
		}
	}
}

// Tunnels still win on their own port: a VXLAN datagram from another
// VXLAN port to 4789 (both tunnel ports) is decoded as VXLAN; a Teredo
// bubble from the Teredo server's port is Teredo signalling, not "not
// Teredo"; a DNS answer from port 4789 (a client behind NAT) is plain UDP,
// counted as tried, not as an undecoded tunnel.
func TestTunnelPortDecision(t *testing.T) {
	c, s := "198.51.100.1", "198.51.100.2"
	ip := frame(t, linkRaw, tcpSeg{src: netip.MustParseAddrPort("10.0.0.5:40000"), dst: netip.MustParseAddrPort("10.0.0.1:80"), seq: 1000, syn: true})
	udp := func(sport, dport uint16, payload []byte) []byte {
		f := tunnelFrame(t, c, s, layers.IPProtocolUDP, dport, payload)
		binary.BigEndian.PutUint16(f[14+20:], sport)
		f[14+20+6], f[14+20+7] = 0, 0
		return f
	}
	for _, tc := range []struct {
		name  string
		frame []byte
		tcp   uint64
		why   Reason
	}{
		{"vxlan from 8472 to 4789", udp(8472, 4789, cat(vxlanHeader(5), l2eth(0x0800), ip)), 1, Reason{}},
		{"teredo bubble from 3544", udp(3544, 40000, make([]byte, 8)), 0, Reason{Kind: decode.ReasonTunnelSignal, Code: uint32(decode.EncapTeredo)}},
		{"dns from 4789", udp(4789, 53, []byte{0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0}), 0, Reason{Kind: decode.ReasonTunnelPort, Code: uint32(decode.EncapVXLAN)}},
		{"dns to 4789", udp(53, 4789, []byte{0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0}), 0, Reason{Kind: decode.ReasonTunnel, Code: uint32(decode.EncapVXLAN)}},
	} {
		e := NewEngine(nil, func(*Request) {})
		e.Packet(&Packet{Data: tc.frame, Link: layers.LinkTypeEthernet})
		st := e.Stats()
		var why Reason
		if cs := st.Reasons.Counts(); len(cs) == 1 {
			why = cs[0].Reason
		}
		if st.TCP != tc.tcp || why != tc.why || st.DecodeErrors != 0 {
			t.Errorf("%s: %d TCP, reason %v, want %d TCP, %v; stats %+v", tc.name, st.TCP, why, tc.tcp, tc.why, st)
		}
	}
}
