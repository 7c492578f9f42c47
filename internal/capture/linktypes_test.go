package capture

import (
	"encoding/binary"
	"fmt"
	"github.com/urldedupd/urldedupd/internal/capture/decode"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// wlanHeader is an 802.11 data header: fc0 0x08 data, 0x88 QoS data; fc1
// the flags (0x02 from DS, 0x03 both, 0x80 order, 0x40 protected).
func wlanHeader(fc0, fc1 byte) []byte {
	h := []byte{fc0, fc1, 0, 0}
	for range 3 {
		h = append(h, 2, 0, 0, 0, 0, 9)
	}
	h = append(h, 0x10, 0)
	if fc1&3 == 3 {
		h = append(h, 2, 0, 0, 0, 0, 8)
	}
	if fc0&0x80 != 0 {
		h = append(h, 0, 0)
		if fc1&0x80 != 0 {
			h = append(h, 0, 0, 0, 0)
		}
	}
	return h
}

func snap(v6 bool) []byte {
	return binary.BigEndian.AppendUint16([]byte{0xaa, 0xaa, 3, 0, 0, 0}, ipEtype(v6))
}

func nflogFrame(ip []byte) []byte {
	f := []byte{2, 0, 0, 5}
	f = append(f, 8, 0, 10, 0, 'a', 'b', 0, 0) // NFULA_PREFIX "ab"
	f = binary.LittleEndian.AppendUint16(f, uint16(4+len(ip)))
	f = binary.LittleEndian.AppendUint16(f, 9) // NFULA_PAYLOAD
	f = append(f, ip...)
	for len(f)%4 != 0 {
		f = append(f, 0)
	}
	return f
}

var linkCases = []struct {
	name string
	link layers.LinkType
	wrap func(ip []byte) []byte
}{
	{"802.11 data", layers.LinkTypeIEEE802_11, func(ip []byte) []byte { return cat(wlanHeader(0x08, 0x02), snap(false), ip) }},
	{"802.11 4-address QoS HT", layers.LinkTypeIEEE802_11, func(ip []byte) []byte { return cat(wlanHeader(0x88, 0x83), snap(false), ip) }},
	{"radiotap QoS", layers.LinkTypeIEEE80211Radio, func(ip []byte) []byte {
		return cat([]byte{0, 0, 12, 0, 0x06, 0, 0, 0, 0, 0x02, 0, 0}, wlanHeader(0x88, 0x01), snap(false), ip) // flags, rate
	}},
	{"prism", decode.LinkTypePrism, func(ip []byte) []byte {
		h := make([]byte, 144)
		binary.LittleEndian.PutUint32(h, 0x41)
		binary.LittleEndian.PutUint32(h[4:], 144)
		return cat(h, wlanHeader(0x08, 0x02), snap(false), ip)
	}},
	{"avs", decode.LinkTypeAVS, func(ip []byte) []byte {
		h := make([]byte, 64)
		binary.BigEndian.PutUint32(h, 0x80211001)
		binary.BigEndian.PutUint32(h[4:], 64)
		return cat(h, wlanHeader(0x08, 0x02), snap(false), ip)
	}},
	{"ppi", decode.LinkTypePPI, func(ip []byte) []byte {
		return cat([]byte{0, 0, 8, 0, 105, 0, 0, 0}, wlanHeader(0x08, 0x02), snap(false), ip)
	}},
	{"nflog", decode.LinkTypeNFLOG, nflogFrame},
	{"ppp", layers.LinkTypePPP, func(ip []byte) []byte { return cat([]byte{0xff, 3, 0, 0x21}, ip) }},
	{"ppp hdlc", decode.LinkTypePPPHDLC, func(ip []byte) []byte { return cat([]byte{0xff, 3, 0, 0x21}, ip) }},
	{"ppp pfc", layers.LinkTypePPP, func(ip []byte) []byte { return cat([]byte{0xff, 3, 0x21}, ip) }},
	{"ppp acfc pfc", layers.LinkTypePPP, func(ip []byte) []byte { return cat([]byte{0x21}, ip) }},
}

// Every link type read by hand: the request is found once, and tshark finds
// it in the same frames.
func TestLinkTypes(t *testing.T) {
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:80")
	for i, tc := range linkCases {
		host := strings.ReplaceAll(tc.name, " ", "-") + ".example"
		src := netip.AddrPortFrom(c.Addr(), c.Port()+uint16(i))
		var frames [][]byte
		var got []string
		e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)) })
		for _, seg := range []tcpSeg{{src: src, dst: s, seq: 1, syn: true}, {src: src, dst: s, seq: 2, ack: true, payload: get("/", host)}} {
			f := tc.wrap(frame(t, linkRaw, seg))
			frames = append(frames, f)
			e.Packet(&Packet{Data: f, Link: tc.link})
		}
		e.asm.Flush()
		want := "http://" + host + "/"
		if st := e.Stats(); len(got) != 1 || got[0] != want || st.TCP != 2 {
			t.Errorf("%s: %q; stats %+v", tc.name, got, st)
		}
		p := filepath.Join(t.TempDir(), fmt.Sprintf("link%d.pcap", i))
		writeCapture(t, p, fmtPcap, tc.link, frames)
		out, err := exec.Command("tshark", "-r", p, "-Y", "http.request", "-T", "fields", "-e", "http.request.full_uri").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		if strings.TrimSpace(string(out)) != want {
			t.Errorf("%s: tshark finds %q", tc.name, out)
		}
	}
}

// 802.11 frames without readable data: management (a beacon), null data
// are other; protected data is undecoded, by reason. An NFLOG message
// without a payload is other.
func TestWLANWithoutData(t *testing.T) {
	e := NewEngine(nil, func(*Request) {})
	for _, f := range [][]byte{cat(wlanHeader(0x80, 0), make([]byte, 12)), wlanHeader(0x48, 0x01), cat(wlanHeader(0x88, 0x41), make([]byte, 40))} {
		e.Packet(&Packet{Data: f, Link: layers.LinkTypeIEEE802_11})
	}
	e.Packet(&Packet{Data: []byte{2, 0, 0, 5, 8, 0, 10, 0, 'a', 'b', 0, 0}, Link: decode.LinkTypeNFLOG}) // a prefix, no payload
	st := e.Stats()
	if st.Other != 3 || st.Undecoded != 1 || st.DecodeErrors != 0 || !slices.Contains(st.Reasons.Counts(), ReasonCount{Reason: Reason{Kind: decode.ReasonNoPacket, Code: 0}, Frames: 1}) {
		t.Fatalf("stats %+v", st)
	}
	if d := st.Reasons.Describe(); len(d) != 1 || d[0] != "1 frame of 802.11 protected (encrypted) data was not decoded" {
		t.Fatalf("%q", d)
	}
}
