package capture

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// fragmentIP splits a raw IPv4 or IPv6 packet into fragments carrying at
// most size bytes (a multiple of 8) of its payload each, in order.
func fragmentIP(t *testing.T, pkt []byte, size int, id uint32) [][]byte {
	t.Helper()
	var out [][]byte
	if pkt[0]>>4 == 4 {
		ihl := int(pkt[0]&15) * 4
		data := pkt[ihl:]
		for off := 0; off < len(data); off += size {
			chunk := data[off:min(off+size, len(data))]
			f := append(append([]byte(nil), pkt[:ihl]...), chunk...)
			binary.BigEndian.PutUint16(f[2:], uint16(len(f)))
			binary.BigEndian.PutUint16(f[4:], uint16(id))
			fo := uint16(off / 8)
			if off+size < len(data) {
				fo |= 0x2000 // more fragments
			}
			binary.BigEndian.PutUint16(f[6:], fo)
			binary.BigEndian.PutUint16(f[10:], 0)
			out = append(out, f)
		}
		return out
	}
	nh, data := pkt[6], pkt[40:]
	for off := 0; off < len(data); off += size {
		chunk := data[off:min(off+size, len(data))]
		f := append([]byte(nil), pkt[:40]...)
		f[6] = 44
		binary.BigEndian.PutUint16(f[4:], uint16(8+len(chunk)))
		fh := make([]byte, 8)
		fh[0] = nh
		fo := uint16(off)
		if off+size < len(data) {
			fo |= 1
		}
		binary.BigEndian.PutUint16(fh[2:], fo)
		binary.BigEndian.PutUint32(fh[4:], id)
		out = append(out, append(append(f, fh...), chunk...))
	}
	return out
}

// TestEngineReassembles sends HTTP requests split into IP fragments, in
// order and reversed, over IPv4 and IPv6, raw and inside a tunnel, and
// checks that the Engine finds them.
func TestEngineReassembles(t *testing.T) {
	long := "GET /" + strings.Repeat("p", 3000) + " HTTP/1.1\r\nHost: frag.example\r\nX-Long: " + strings.Repeat("h", 2000) + "\r\n\r\n"
	for _, v6 := range []bool{false, true} {
		for _, reversed := range []bool{false, true} {
			cli, srv := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
			if v6 {
				cli, srv = netip.MustParseAddrPort("[fd00::1]:40000"), netip.MustParseAddrPort("[fd00::2]:80")
			}
			syn := frame(t, linkRaw, tcpSeg{src: cli, dst: srv, seq: 99, syn: true})
			req := frame(t, linkRaw, tcpSeg{src: cli, dst: srv, seq: 100, ack: true, payload: long})
			frags := fragmentIP(t, req, 1200, 7)
			if reversed {
				for i, j := 0, len(frags)-1; i < j; i, j = i+1, j-1 {
					frags[i], frags[j] = frags[j], frags[i]
				}
			}
			var got []string
			e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)) })
			e.Packet(&Packet{Data: syn, Link: layers.LinkTypeRaw, Info: gopacket.CaptureInfo{Timestamp: time.Unix(1, 0)}})
			for _, f := range frags {
				e.Packet(&Packet{Data: f, Link: layers.LinkTypeRaw, Info: gopacket.CaptureInfo{Timestamp: time.Unix(1, 0)}})
			}
			e.asm.Flush()
			st := e.Stats()
			want := "http://frag.example/" + strings.Repeat("p", 3000)
			if len(got) != 1 || got[0] != want || st.Fragments != uint64(len(frags)) || st.Defrag.Reassembled != 1 || st.TCP != 1 {
				t.Fatalf("v6 %v reversed %v: %d requests, stats %+v", v6, reversed, len(got), st)
			}
		}
	}
}
