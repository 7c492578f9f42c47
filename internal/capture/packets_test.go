package capture

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// link is a link layer for built frames.
type link string

const (
	linkEth  link = "ethernet"
	linkVLAN link = "vlan"
	linkQinQ link = "qinq"
	linkSLL  link = "sll"
	linkSLL2 link = "sll2"
	linkRaw  link = "raw"
	linkNull link = "null"
)

func (l link) type_() layers.LinkType {
	switch l {
	case linkSLL:
		return layers.LinkTypeLinuxSLL
	case linkSLL2:
		return layers.LinkTypeLinuxSLL2
	case linkRaw:
		return layers.LinkTypeRaw
	case linkNull:
		return layers.LinkTypeNull
	}
	return layers.LinkTypeEthernet
}

// tcpSeg is one segment to build.
type tcpSeg struct {
	src, dst      netip.AddrPort
	seq           uint32
	syn, ack, fin bool
	payload       string
}

// frame serializes seg over the link layer with gopacket.
func frame(t *testing.T, l link, s tcpSeg) []byte {
	t.Helper()
	tcp := &layers.TCP{SrcPort: layers.TCPPort(s.src.Port()), DstPort: layers.TCPPort(s.dst.Port()),
		Seq: s.seq, SYN: s.syn, ACK: s.ack, FIN: s.fin, Window: 65535, PSH: len(s.payload) > 0}
	var ip gopacket.SerializableLayer
	etype := layers.EthernetTypeIPv4
	if s.src.Addr().Is4() {
		ip4 := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP,
			SrcIP: net.IP(s.src.Addr().AsSlice()), DstIP: net.IP(s.dst.Addr().AsSlice())}
		tcp.SetNetworkLayerForChecksum(ip4)
		ip = ip4
	} else {
		ip6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP,
			SrcIP: net.IP(s.src.Addr().AsSlice()), DstIP: net.IP(s.dst.Addr().AsSlice())}
		tcp.SetNetworkLayerForChecksum(ip6)
		ip, etype = ip6, layers.EthernetTypeIPv6
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	ls := []gopacket.SerializableLayer{ip, tcp, gopacket.Payload(s.payload)}
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	switch l {
	case linkEth:
		ls = append([]gopacket.SerializableLayer{&layers.Ethernet{SrcMAC: mac, DstMAC: mac, EthernetType: etype}}, ls...)
	case linkVLAN:
		ls = append([]gopacket.SerializableLayer{&layers.Ethernet{SrcMAC: mac, DstMAC: mac, EthernetType: layers.EthernetTypeDot1Q},
			&layers.Dot1Q{VLANIdentifier: 10, Type: etype}}, ls...)
	case linkQinQ:
		ls = append([]gopacket.SerializableLayer{&layers.Ethernet{SrcMAC: mac, DstMAC: mac, EthernetType: layers.EthernetTypeQinQ},
			&layers.Dot1Q{VLANIdentifier: 100, Type: layers.EthernetTypeDot1Q}, &layers.Dot1Q{VLANIdentifier: 10, Type: etype}}, ls...)
	case linkNull:
		family := layers.ProtocolFamilyIPv4
		if etype == layers.EthernetTypeIPv6 {
			family = layers.ProtocolFamilyIPv6Linux
		}
		ls = append([]gopacket.SerializableLayer{&layers.Loopback{Family: family}}, ls...)
	}
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	switch l { // no serializers for the Linux cooked headers: built by hand
	case linkSLL:
		h := make([]byte, 16)
		binary.BigEndian.PutUint16(h[0:], 0) // to us
		binary.BigEndian.PutUint16(h[2:], 1) // ARPHRD_ETHER
		binary.BigEndian.PutUint16(h[4:], 6)
		copy(h[6:], mac)
		binary.BigEndian.PutUint16(h[14:], uint16(etype))
		b = append(h, b...)
	case linkSLL2:
		h := make([]byte, 20)
		binary.BigEndian.PutUint16(h[0:], uint16(etype))
		binary.BigEndian.PutUint32(h[4:], 2) // ifindex
		binary.BigEndian.PutUint16(h[8:], 1)
		h[10], h[11] = 0, 6
		copy(h[12:], mac)
		b = append(h, b...)
	}
	return append([]byte(nil), b...)
}

type format string

const (
	fmtPcap   format = "pcap"
	fmtPcapng format = "pcapng"
	fmtGzip   format = "pcap.gz"
)

// writeCapture writes the frames to a file of the given format.
func writeCapture(t *testing.T, path string, f format, lt layers.LinkType, frames [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	ts := time.Unix(1_700_000_000, 0)
	switch f {
	case fmtPcapng:
		w, err := pcapgo.NewNgWriter(&buf, lt)
		if err != nil {
			t.Fatal(err)
		}
		for i, fr := range frames {
			ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(fr), Length: len(fr)}
			if err := w.WritePacket(ci, fr); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
	default:
		w := pcapgo.NewWriter(&buf)
		w.WriteFileHeader(65536, lt)
		for i, fr := range frames {
			ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(fr), Length: len(fr)}
			if err := w.WritePacket(ci, fr); err != nil {
				t.Fatal(err)
			}
		}
	}
	data := buf.Bytes()
	if f == fmtGzip {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		data = z.Bytes()
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// replay runs the files through an Engine and returns "METHOD URL" lines.
func replay(t *testing.T, paths ...string) ([]string, Stats, error) {
	t.Helper()
	src, err := OpenFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []string
	e := NewEngine(nil, func(r *Request) { got = append(got, string(r.Method)+" "+string(r.URL)) })
	err = e.Run(context.Background(), src)
	return got, e.Stats(), err
}

// runEngine runs the file through an Engine with opts, calling emit for
// each record, and returns its Stats; a read error fails the test.
func runEngine(t *testing.T, opts *Options, path string, emit func(*Request)) Stats {
	t.Helper()
	src, err := OpenFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	e := NewEngine(opts, emit)
	if err := e.Run(context.Background(), src); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return e.Stats()
}

func get(path, host string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: test\r\n\r\n"
}

// edgeCases returns the client's segments (after the handshake) and the
// requests they must yield.
func edgeCases() map[string]struct {
	segs func(c, s netip.AddrPort) []tcpSeg
	want []string
} {
	type tc = struct {
		segs func(c, s netip.AddrPort) []tcpSeg
		want []string
	}
	const isn = 5000
	at := func(c, s netip.AddrPort, off int, p string) tcpSeg {
		return tcpSeg{src: c, dst: s, seq: isn + 1 + uint32(off), ack: true, payload: p}
	}
	r1 := get("/split?over=3", "split.example")
	var ten strings.Builder
	var tenWant []string
	for i := range 10 {
		ten.WriteString(get("/pipe/"+string(rune('a'+i)), "pipe.example"))
		tenWant = append(tenWant, "GET http://pipe.example/pipe/"+string(rune('a'+i)))
	}
	body, chunk := "GET /in-body HTTP/1.1\r\n\r\n", "GET /in-chunk HTTP/1.1\r\n\r\n!"
	bodies := fmt.Sprintf("POST /form HTTP/1.1\r\nHost: b.example\r\nContent-Length: %d\r\n\r\n%s", len(body), body) +
		fmt.Sprintf("POST /chunks HTTP/1.1\r\nHost: b.example\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(chunk), chunk) +
		get("/after-bodies", "b.example")
	lost1, lost2, lost3 := get("/before-gap", "g.example"), get("/lost", "g.example"), get("/after-gap", "g.example")
	return map[string]tc{
		"split over 3 segments": {func(c, s netip.AddrPort) []tcpSeg {
			return []tcpSeg{at(c, s, 0, r1[:7]), at(c, s, 7, r1[7:30]), at(c, s, 30, r1[30:])}
		}, []string{"GET http://split.example/split?over=3"}},
		"out of order": {func(c, s netip.AddrPort) []tcpSeg {
			return []tcpSeg{at(c, s, 30, r1[30:]), at(c, s, 0, r1[:7]), at(c, s, 7, r1[7:30])}
		}, []string{"GET http://split.example/split?over=3"}},
		"retransmitted overlapping segment": {func(c, s netip.AddrPort) []tcpSeg {
			return []tcpSeg{at(c, s, 0, r1[:20]), at(c, s, 10, r1[10:40]), at(c, s, 0, r1[:40]), at(c, s, 40, r1[40:])}
		}, []string{"GET http://split.example/split?over=3"}},
		"10 pipelined in one segment": {func(c, s netip.AddrPort) []tcpSeg {
			return []tcpSeg{at(c, s, 0, ten.String())}
		}, tenWant},
		"content-length and chunked bodies": {func(c, s netip.AddrPort) []tcpSeg {
			return []tcpSeg{at(c, s, 0, bodies[:50]), at(c, s, 50, bodies[50:])}
		}, []string{"POST http://b.example/form", "POST http://b.example/chunks", "GET http://b.example/after-bodies"}},
		"lost segment then a good request": {func(c, s netip.AddrPort) []tcpSeg {
			return []tcpSeg{at(c, s, 0, lost1), at(c, s, len(lost1)+len(lost2), lost3)}
		}, []string{"GET http://g.example/before-gap", "GET http://g.example/after-gap"}},
	}
}

func TestEdgeCasesOverEveryLink(t *testing.T) {
	tmp := t.TempDir()
	addrs := map[string][2]netip.AddrPort{
		"ipv4": {netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:80")},
		"ipv6": {netip.MustParseAddrPort("[2001:db8::10]:40000"), netip.MustParseAddrPort("[2001:db8::1]:8080")},
	}
	for name, tc := range edgeCases() {
		for _, l := range []link{linkEth, linkVLAN, linkQinQ, linkSLL, linkSLL2, linkRaw, linkNull} {
			for ipName, a := range addrs {
				c, s := a[0], a[1]
				frames := [][]byte{
					frame(t, l, tcpSeg{src: c, dst: s, seq: 5000, syn: true}),
					frame(t, l, tcpSeg{src: s, dst: c, seq: 9000, syn: true, ack: true}),
				}
				segs := tc.segs(c, s)
				for _, sg := range segs {
					frames = append(frames, frame(t, l, sg))
				}
				f := []format{fmtPcap, fmtPcapng, fmtGzip}[len(frames)%3]
				path := filepath.Join(tmp, strings.ReplaceAll(name, " ", "_")+"-"+string(l)+"-"+ipName+"."+string(f))
				writeCapture(t, path, f, l.type_(), frames)
				got, st, err := replay(t, path)
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%s over %s/%s (%s): got %q, %v; want %q", name, l, ipName, f, got, err, tc.want)
				}
				if st.DecodeErrors != 0 || st.TCP != uint64(len(frames)) {
					t.Errorf("%s over %s/%s: stats %+v", name, l, ipName, st)
				}
			}
		}
	}
}

// Several files are read in order, whatever their format; a truncated or
// corrupt one ends the run with an error that names it and says where,
// after everything before that point was reported.
func TestFilesInOrderAndDamage(t *testing.T) {
	tmp := t.TempDir()
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:80")
	port := c.Port()
	mk := func(name string, f format, paths ...string) string {
		var frames [][]byte
		for _, p := range paths {
			port++ // one connection per request
			cl := netip.AddrPortFrom(c.Addr(), port)
			frames = append(frames, frame(t, linkEth, tcpSeg{src: cl, dst: s, seq: 1, ack: true, payload: get(p, "f.example")}))
		}
		path := filepath.Join(tmp, name)
		writeCapture(t, path, f, layers.LinkTypeEthernet, frames)
		return path
	}
	a := mk("a.pcapng", fmtPcapng, "/a1", "/a2")
	b := mk("b.pcap.gz", fmtGzip, "/b1")
	cfile := mk("c.pcap", fmtPcap, "/c1", "/c2", "/c3")
	got, _, err := replay(t, a, b, cfile)
	want := []string{"GET http://f.example/a1", "GET http://f.example/a2", "GET http://f.example/b1",
		"GET http://f.example/c1", "GET http://f.example/c2", "GET http://f.example/c3"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, %v", got, err)
	}

	data, _ := os.ReadFile(cfile)
	trunc := filepath.Join(tmp, "trunc.pcap")
	os.WriteFile(trunc, data[:len(data)-20], 0o644)
	got, _, err = replay(t, a, trunc)
	t.Logf("truncated: %v", err)
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "trunc.pcap: packet 3 (record at byte ") {
		t.Fatalf("truncated: %v", err)
	}
	if want := []string{want[0], want[1], want[3], want[4]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("truncated: got %q; want everything before the damage: %q", got, want)
	}

	junk := filepath.Join(tmp, "junk.pcap")
	os.WriteFile(junk, []byte("this is not a capture"), 0o644)
	if _, _, err := replay(t, junk); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "junk.pcap") {
		t.Fatalf("junk: %v", err)
	}
	corrupt := filepath.Join(tmp, "corrupt.pcap")
	bad := append([]byte(nil), data...)
	// The first record's caplen, over its original length and over the
	// maximum: skipped as it is read, the file ends inside it. (A caplen
	// over the original length alone is read whole: see
	// TestCapturedLongerThanOriginal.)
	binary.LittleEndian.PutUint32(bad[24+8:], 0x7fffffff)
	os.WriteFile(corrupt, bad, 0o644)
	_, _, err = replay(t, corrupt)
	t.Logf("corrupt: %v", err)
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "corrupt.pcap: packet 1 (record at byte 24)") ||
		!strings.Contains(err.Error(), "inside a 2147483647-byte record (over the maximum, being skipped)") {
		t.Fatalf("corrupt: %v", err)
	}
}
