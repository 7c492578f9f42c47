package capture

import (
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// wireSeg is a TCP segment of a whole conversation, both directions, with
// acknowledgement numbers, so that tshark follows it as it would a real
// capture.
type wireSeg struct {
	fromServer         bool
	seq, ack           uint32
	syn, fin, rst, psh bool
	payload            string
}

// wireFrames serializes a conversation between c and s over Ethernet.
func wireFrames(t *testing.T, c, s netip.AddrPort, segs []wireSeg) [][]byte {
	t.Helper()
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	var frames [][]byte
	for _, w := range segs {
		src, dst := c, s
		if w.fromServer {
			src, dst = s, c
		}
		tcp := &layers.TCP{SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port()), Seq: w.seq, Ack: w.ack,
			SYN: w.syn, ACK: w.ack != 0, FIN: w.fin, RST: w.rst, PSH: w.payload != "", Window: 65535}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP,
			SrcIP: net.IP(src.Addr().AsSlice()), DstIP: net.IP(dst.Addr().AsSlice())}
		tcp.SetNetworkLayerForChecksum(ip)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			&layers.Ethernet{SrcMAC: mac, DstMAC: mac, EthernetType: layers.EthernetTypeIPv4}, ip, tcp, gopacket.Payload(w.payload)); err != nil {
			t.Fatal(err)
		}
		frames = append(frames, append([]byte(nil), buf.Bytes()...))
	}
	return frames
}

// Retransmissions after FIN and after RST, a SYN sent again after data,
// overlapping copies that differ and a request in a SYN, in captures built
// with gopacket and cross-checked with tshark -Y http.request. Each request
// is reported once; where tshark differs, the test says why.
func TestRetransmissionsAgainstTshark(t *testing.T) {
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:80")
	const ci, si = 1000, 9000 // ISNs
	r1, r2 := get("/one", "r.example"), get("/two", "r.example")
	resp := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
	x, y := get("/0123456789abcdef", "o.example"), get("/ZZZZZZZZZZZZZZZZ", "o.example") // same length
	n1, n2, nr := uint32(len(r1)), uint32(len(r2)), uint32(len(resp))
	hs := []wireSeg{{seq: ci, syn: true}, {fromServer: true, seq: si, ack: ci + 1, syn: true}, {seq: ci + 1, ack: si + 1}}
	// a connection with two requests, closed by FIN both ways
	closed := append(hs[:3:3],
		wireSeg{seq: ci + 1, ack: si + 1, payload: r1}, wireSeg{fromServer: true, seq: si + 1, ack: ci + 1 + n1, payload: resp},
		wireSeg{seq: ci + 1 + n1, ack: si + 1 + nr, payload: r2}, wireSeg{fromServer: true, seq: si + 1 + nr, ack: ci + 1 + n1 + n2, payload: resp},
		wireSeg{seq: ci + 1 + n1 + n2, ack: si + 1 + 2*nr, fin: true},
		wireSeg{fromServer: true, seq: si + 1 + 2*nr, ack: ci + 2 + n1 + n2, fin: true},
		wireSeg{seq: ci + 2 + n1 + n2, ack: si + 2 + 2*nr})
	tests := []struct {
		name   string
		segs   []wireSeg
		want   []string // ours
		tshark []string // what tshark shows, when it differs
	}{
		{"retransmissions after FIN", append(closed[:len(closed):len(closed)],
			wireSeg{seq: ci + 1, ack: si + 1, payload: r1}, wireSeg{seq: ci + 1 + n1, ack: si + 1 + nr, payload: r2},
			wireSeg{seq: ci + 1, ack: si + 1, payload: r1 + r2}),
			[]string{"GET http://r.example/one", "GET http://r.example/two"}, nil},
		{"retransmission after RST", append(hs[:3:3],
			wireSeg{seq: ci + 1, ack: si + 1, payload: r1}, wireSeg{fromServer: true, seq: si + 1, rst: true},
			wireSeg{seq: ci + 1, ack: si + 1, payload: r1}),
			[]string{"GET http://r.example/one"}, nil},
		{"SYN sent again after data", append(hs[:3:3],
			wireSeg{seq: ci + 1, ack: si + 1, payload: r1[:20]}, wireSeg{seq: ci, syn: true},
			wireSeg{seq: ci + 21, ack: si + 1, payload: r1[20:]}, wireSeg{seq: ci + 1 + n1, ack: si + 1, payload: r2}),
			[]string{"GET http://r.example/one", "GET http://r.example/two"}, nil},
		{"overlapping copies that differ: the first wins", append(hs[:3:3],
			wireSeg{seq: ci + 11, ack: si + 1, payload: x[10:]}, wireSeg{seq: ci + 1, ack: si + 1, payload: y}),
			[]string{"GET http://o.example/ZZZZZ56789abcdef"},
			// tshark (with tcp.reassemble_out_of_order, else it shows no
			// request at all) takes the later copy whole and flags the
			// overlap "[Illegal Segments]"; the first copy winning is
			// Zeek's and Suricata's default, and what the issue asks.
			[]string{"GET http://o.example/ZZZZZZZZZZZZZZZZ"}},
		{"request in the SYN (Fast Open)", []wireSeg{{seq: ci, syn: true, payload: r1},
			{fromServer: true, seq: si, ack: ci + 1 + n1, syn: true}, {seq: ci + 1 + n1, ack: si + 1, payload: r2}},
			[]string{"GET http://r.example/one", "GET http://r.example/two"}, nil},
	}
	tmp := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(tmp, strings.ReplaceAll(tt.name, " ", "_")+".pcap")
			writeCapture(t, path, fmtPcap, layers.LinkTypeEthernet, wireFrames(t, c, s, tt.segs))
			got, st, err := replay(t, path)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
			if st.Assembler.Flows != 1 || st.Assembler.ParseErrors != 0 {
				t.Fatalf("stats %+v: want 1 flow, no parse error", st.Assembler)
			}
			out, err := exec.Command("tshark", "-r", path, "-o", "tcp.reassemble_out_of_order:TRUE", "-Y", "http.request", "-T", "fields",
				"-e", "http.request.method", "-e", "http.request.full_uri").Output()
			if err != nil {
				t.Fatalf("tshark: %v", err)
			}
			var theirs []string
			for l := range strings.Lines(string(out)) {
				theirs = append(theirs, strings.Replace(strings.TrimSpace(l), "\t", " ", 1))
			}
			want := tt.tshark
			if want == nil {
				want = tt.want
			}
			if !reflect.DeepEqual(theirs, want) {
				t.Fatalf("case %d: tshark shows %q, the test says %q", i, theirs, want)
			}
		})
	}
}
