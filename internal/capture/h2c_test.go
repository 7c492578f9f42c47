package capture

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/racetest"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/http2/hpack"

	"github.com/urldedupd/urldedupd/internal/h2c"
)

// The h2c captures were made from real traffic by
// scripts/make-h2c-captures.sh: curl and nghttp with prior knowledge
// against nghttpd and a Go h2c server (ports 8080 and 8081), curl's
// "Upgrade: h2c" against the Go server (8082), and declined by an HTTP/1.1
// server (8083). NAME.urls lists the
// records each must yield, "PROTO METHOD URL".
var h2cCaptures = []struct {
	path, urls string
	conns, ups uint64   // HTTP/2 connections, of them upgraded
	decodeAs   []string // for tshark: prior knowledge is HTTP/2 from the start; HTTP/1.1 it follows into an Upgrade
}{
	{"testdata/captures/h2c-prior.pcap", "testdata/captures/h2c-prior.urls", 7, 0, []string{"tcp.port==8080,http2", "tcp.port==8081,http2"}},
	{"testdata/captures/h2c-upgrade.pcap", "testdata/captures/h2c-upgrade.urls", 3, 3, []string{"tcp.port==8082,http", "tcp.port==8083,http"}},
}

func replayProtos(t *testing.T, protos Protos, path string) ([]string, Stats) {
	t.Helper()
	src, err := OpenFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []string
	e := NewEngine(&Options{Protos: protos}, func(r *Request) {
		got = append(got, r.Proto.String()+" "+string(r.Method)+" "+string(r.URL))
	})
	if err := e.Run(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	return got, e.Stats()
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	sort.Strings(lines)
	return lines
}

func TestH2CCaptures(t *testing.T) {
	for _, c := range h2cCaptures {
		want := readLines(t, c.urls)
		got, st := replayProtos(t, 0, c.path)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %q\nwant %q", c.path, got, want)
		}
		h2 := uint64(0)
		for _, w := range want {
			if strings.HasPrefix(w, "h2c ") {
				h2++
			}
		}
		if st.Records[ProtoH2C] != h2 || st.H2C != (H2CStats{Connections: c.conns, Upgrades: c.ups}) ||
			st.Assembler.ParseErrors != 0 || st.Assembler.NonHTTP != (NonHTTPCounts{}) || st.Assembler.Gaps != 0 {
			t.Errorf("%s: records %v, h2c %+v, assembler %+v", c.path, st.Records, st.H2C, st.Assembler)
		}

		// Without h2c the streams are skipped as before, counted as
		// HTTP/2; HTTP/1.1 upgrade requests are still recorded.
		got, st = replayProtos(t, 1<<ProtoHTTP, c.path)
		var http []string
		for _, w := range want {
			if strings.HasPrefix(w, "http ") {
				http = append(http, w)
			}
		}
		if strings.Join(got, "\n") != strings.Join(http, "\n") || st.Assembler.NonHTTP[StreamHTTP2] != c.conns ||
			st.H2C != (H2CStats{}) || st.Assembler.ParseErrors != 0 {
			t.Errorf("%s without h2c: %q, non-HTTP %v, h2c %+v", c.path, got, st.Assembler.NonHTTP, st.H2C)
		}
		// h2c alone: only the HTTP/2 requests.
		got, _ = replayProtos(t, 1<<ProtoH2C, c.path)
		if len(got) != int(h2) {
			t.Errorf("%s with h2c only: %q", c.path, got)
		}
	}
}

// tshark decodes the same requests: prior-knowledge ports are given as
// HTTP/2 (-d), the upgrade port as HTTP, which tshark follows through the
// 101 into HTTP/2. No difference to
// justify: every request in these captures has :scheme, :authority and
// :path, so tshark's fields give the URL as urldedupd builds it.
func TestH2CTsharkAgrees(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatal("tshark is needed (make test installs it): ", err)
	}
	for _, c := range h2cCaptures {
		args := []string{"-n", "-r", c.path}
		for _, d := range c.decodeAs {
			args = append(args, "-d", d)
		}
		args = append(args, "-Y", "(http2.type==1 && http2.headers.method) || http.request", "-T", "fields",
			"-E", "aggregator=/s", "-e", "http2.headers.method", "-e", "http2.headers.scheme",
			"-e", "http2.headers.authority", "-e", "http2.headers.path",
			"-e", "http.request.method", "-e", "http.request.full_uri")
		out, err := exec.Command("tshark", args...).Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		var fromTshark []string
		// Lines are split on newlines only: a line's empty leading fields are tabs.
		for _, line := range strings.Split(strings.Trim(string(out), "\n"), "\n") {
			f := strings.Split(line, "\t")
			for len(f) < 6 { // tshark leaves out empty fields at the end
				f = append(f, "")
			}
			if f[4] != "" {
				fromTshark = append(fromTshark, "http "+f[4]+" "+f[5])
				continue
			}
			methods, schemes, auths, paths := strings.Fields(f[0]), strings.Fields(f[1]), strings.Fields(f[2]), strings.Fields(f[3])
			if len(schemes) != len(methods) || len(auths) != len(methods) || len(paths) != len(methods) {
				t.Fatalf("tshark line %q: fields missing", line)
			}
			for i, m := range methods {
				fromTshark = append(fromTshark, "h2c "+m+" "+schemes[i]+"://"+auths[i]+paths[i])
			}
		}
		sort.Strings(fromTshark)
		got, _ := replayProtos(t, 0, c.path)
		if !reflect.DeepEqual(got, fromTshark) || len(got) == 0 {
			t.Errorf("%s: urldedupd and tshark differ\nurldedupd %q\ntshark    %q", c.path, got, fromTshark)
		}
	}
}

// h2cFrame is an HTTP/2 frame: 9-byte header and payload.
func h2cFrame(typ, flags byte, stream uint32, payload []byte) []byte {
	n := len(payload)
	b := []byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags,
		byte(stream >> 24), byte(stream >> 16), byte(stream >> 8), byte(stream)}
	return append(b, payload...)
}

// h2cRequest is a HEADERS frame for a GET of path on stream, encoded by
// enc (whose dynamic table goes on from request to request).
func h2cRequest(enc *hpack.Encoder, buf *bytes.Buffer, stream uint32, path string) []byte {
	buf.Reset()
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "h2.example"}, {":path", path}, {"user-agent", "test/1"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	return h2cFrame(0x1, 0x4, stream, buf.Bytes())
}

// An established h2c flow: DATA segments, whole frames or the middle of
// a long one, allocate nothing in the Engine.
func TestH2CEngineAllocations(t *testing.T) {
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:8080")
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	first := h2c.Preface + string(h2cFrame(0x4, 0, 0, nil)) + string(h2cRequest(enc, &hb, 1, "/first"))
	seq := uint32(101)
	var frames [][]byte
	add := func(p string) {
		frames = append(frames, frame(t, linkEth, tcpSeg{src: c, dst: s, seq: seq, ack: true, payload: p}))
		frames = append(frames, frame(t, linkEth, tcpSeg{src: s, dst: c, seq: 1, ack: true}))
		seq += uint32(len(p))
	}
	frames = append(frames, frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 100, syn: true}))
	add(first)
	add(string(h2cRequest(enc, &hb, 3, "/second")) + string(h2cFrame(0x0, 0, 3, make([]byte, 1000))))
	for range 100 { // whole DATA frames
		add(string(h2cFrame(0x0, 0, 3, make([]byte, 1391))))
	}
	add(string([]byte{0x10, 0x00, 0x00, 0x0, 0x0, 0, 0, 0, 3})) // a 1 MiB DATA frame's header
	for range 100 {                                             // its payload
		add(string(make([]byte, 1400)))
	}
	reqs := 0
	e := NewEngine(nil, func(r *Request) {
		if r.Proto != ProtoH2C {
			t.Errorf("a %v record", r.Proto)
		}
		reqs++
	})
	for _, f := range frames[:7] {
		e.Packet(&Packet{Data: f, Link: layers.LinkTypeEthernet})
	}
	rest := frames[7:]
	i := 0
	n := testing.AllocsPerRun(len(rest)/2-1, func() {
		e.Packet(&Packet{Data: rest[i], Link: layers.LinkTypeEthernet})
		i++
	})
	st := e.Stats()
	if n != 0 || reqs != 2 || st.H2C.Connections != 1 || st.H2C != (H2CStats{Connections: 1}) {
		t.Fatalf("%v allocations per packet; %d requests, h2c %+v", n, reqs, st.H2C)
	}
}

// HPACK carries any bytes in a field: an h2c request's URL never holds
// bytes that would end it or forge another record in the text formats
// (newline, tab: "new\tURL\n" lines) or change its host. Control bytes and
// spaces in :path are percent-encoded; :authority is taken as SNI and
// SOCKS names are (bytes that would end the host made '_'); a :scheme keeps
// only the characters a scheme has (RFC 3986 §3.1), others made '_'.
func TestH2CHostileFieldsInURL(t *testing.T) {
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:8080")
	for _, tc := range []struct {
		scheme, authority, path, want string
	}{
		{"http", "h2.example", "/a\nnew\thttp://forged.example/ \x7f\r", "http://h2.example/a%0Anew%09http://forged.example/%20%7F%0D"},
		{"http", "evil.example/x?y#z@w\n", "/p", "http://evil.example_x_y_z_w_/p"},
		{"https://bank.example/login?", "h2.example", "/p", "https___bank.example_login_://h2.example/p"},
		{"git+ssh-1.0", "h2.example", "/ok/%41?q=1", "git+ssh-1.0://h2.example/ok/%41?q=1"},
	} {
		var hb bytes.Buffer
		enc := hpack.NewEncoder(&hb)
		for _, f := range [][2]string{{":method", "GET"}, {":scheme", tc.scheme}, {":authority", tc.authority}, {":path", tc.path}} {
			enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		payload := h2c.Preface + string(h2cFrame(0x4, 0, 0, nil)) + string(h2cFrame(0x1, 0x4, 1, hb.Bytes()))
		var got []string
		e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)) })
		for _, f := range [][]byte{
			frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 100, syn: true}),
			frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 101, ack: true, payload: payload}),
		} {
			e.Packet(&Packet{Data: f, Link: layers.LinkTypeEthernet})
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%q %q %q: records %q, want [%q]", tc.scheme, tc.authority, tc.path, got, tc.want)
		}
	}
}

// The h2c decoders' tables and buffers count in the buffer cap: 64
// connections each raising its HPACK table to 64 KiB and filling it would
// hold 4 MiB; with MaxBuffer at 1 MiB the cap is reached, the decoders
// that would pass it are refused (given up, counted as lost and as
// overflows), and Buffered, which is what they hold, never passes it.
func TestH2CTablesCountInTheCap(t *testing.T) {
	racetest.SkipSequential(t)
	const conns, capBytes = 64, 1 << 20
	s := netip.MustParseAddrPort("192.0.2.1:8080")
	var streams [conns][]byte
	for i := range streams {
		var hb bytes.Buffer
		enc := hpack.NewEncoder(&hb)
		enc.SetMaxDynamicTableSizeLimit(h2c.MaxTableSize)
		enc.SetMaxDynamicTableSize(h2c.MaxTableSize)
		b := []byte(h2c.Preface)
		for stream, size := uint32(1), 0; size < 2*h2c.MaxTableSize; stream += 2 {
			hb.Reset()
			fs := [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "h2.example"}, {":path", fmt.Sprintf("/%d/%d", i, stream)}}
			for k := range 50 {
				fs = append(fs, [2]string{fmt.Sprintf("x-%d-%d", stream, k), fmt.Sprintf("%d.%d", i, k)})
			}
			for _, f := range fs {
				enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
				size += len(f[0]) + len(f[1]) + 32
			}
			b = append(b, h2cFrame(0x1, 0x4, stream, hb.Bytes())...)
		}
		streams[i] = b
	}
	reqs := 0
	e := NewEngine(&Options{Assembler: AssemblerOptions{MaxBuffer: capBytes}}, func(*Request) { reqs++ })
	peak := 0
	for i, b := range streams {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}), 40000)
		e.Packet(&Packet{Data: frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 100, syn: true}), Link: layers.LinkTypeEthernet})
		for seq := uint32(0); len(b) > 0; {
			k := min(len(b), 1400)
			e.Packet(&Packet{Data: frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 101 + seq, ack: true, payload: string(b[:k])}), Link: layers.LinkTypeEthernet})
			seq += uint32(k)
			b = b[k:]
			peak = max(peak, e.asm.Buffered())
		}
	}
	held := 0
	for _, h := range e.asm.flows {
		if h.parser != nil {
			held += h.parser.Held() // the decoder and the HTTP/1 buffers
		}
	}
	st := e.Stats()
	t.Logf("%d requests; peak buffered %d KiB, decoders hold %d KiB; h2c %+v, %d overflows", reqs, peak>>10, held>>10, st.H2C, st.Assembler.Overflows)
	if peak > capBytes || held > capBytes {
		t.Errorf("buffered %d at its peak, decoders hold %d: over the cap of %d", peak, held, capBytes)
	}
	if st.H2C.Connections != conns || st.H2C.Lost == 0 || st.H2C.Lost == conns || st.Assembler.Overflows < st.H2C.Lost || reqs == 0 {
		t.Errorf("the cap was not reached and refused: %d requests, h2c %+v, %d overflows", reqs, st.H2C, st.Assembler.Overflows)
	}
}

// h2c inside an HTTP CONNECT tunnel, from real traffic
// (scripts/make-h2c-connect-capture.sh): curl through tinyproxy to
// nghttpd and a Go h2c server with prior knowledge, TLS and HTTP/1.1
// through the same proxy. Each CONNECT is recorded, and the HTTP/2
// requests inside it; TLS inside is read as before, and HTTP/1 inside a
// tunnel is parsed (as tshark does). tshark, told that the
// bytes after each CONNECT are HTTP/2, finds the same requests.
func TestH2CInsideConnect(t *testing.T) {
	const path = "testdata/captures/h2c-connect.pcap"
	want := readLines(t, "testdata/captures/h2c-connect.urls")
	got, st := replayProtos(t, 0, path)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if st.H2C != (H2CStats{Connections: 4}) || st.Records[ProtoH2C] != 4 || st.Assembler.NonHTTP != (NonHTTPCounts{StreamTLS: 1}) || st.Assembler.ParseErrors != 0 {
		t.Errorf("h2c %+v records %v non-HTTP %v parse errors %d", st.H2C, st.Records, st.Assembler.NonHTTP, st.Assembler.ParseErrors)
	}
	// tshark reads a tunnel as HTTP/2 when told its port is; 8080 is in
	// its HTTP port range, which wins, so the tunnel to nghttpd on 8080 is
	// left out of the comparison.
	out, err := exec.Command("tshark", "-r", path, "-d", "tcp.port==8081,http2", "-Y", "http2.type==1 && http2.headers.method",
		"-T", "fields", "-E", "separator=/s", "-e", "http2.headers.method", "-e", "http2.headers.authority", "-e", "http2.headers.path").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var fromTshark, wantTshark []string
	for l := range strings.Lines(strings.TrimSpace(string(out))) {
		f := strings.Fields(l)
		if len(f) == 3 {
			fromTshark = append(fromTshark, "h2c "+f[0]+" http://"+f[1]+f[2])
		}
	}
	for _, w := range want {
		if strings.HasPrefix(w, "h2c ") && !strings.Contains(w, ":8080/") {
			wantTshark = append(wantTshark, w)
		}
	}
	sort.Strings(fromTshark)
	if len(wantTshark) != 3 || !reflect.DeepEqual(fromTshark, wantTshark) {
		t.Errorf("tshark finds %q, want %q", fromTshark, wantTshark)
	}
	// Without h2c, its tunnels are counted as HTTP/2 streams and skipped.
	got, st = replayProtos(t, 1<<ProtoHTTP|1<<ProtoTLS, path)
	if st.Records[ProtoH2C] != 0 || st.Assembler.NonHTTP[StreamHTTP2] != 4 || len(got) != len(want)-4 {
		t.Errorf("without h2c: %q, non-HTTP %v", got, st.Assembler.NonHTTP)
	}
}

// An HTTP/2 request inside a CONNECT tunnel that names no authority
// (neither :authority nor Host) is recorded at the authority the CONNECT
// opened, its userinfo left out, not at the proxy's address; the
// authority is not kept past its connection.
func TestH2CInsideConnectNoAuthority(t *testing.T) {
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:3128")
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":path", "/no/authority"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	connect := "CONNECT user:secret@inner.example:8081 HTTP/1.1\r\nHost: inner.example:8081\r\n\r\n"
	h2 := h2c.Preface + string(h2cFrame(0x4, 0, 0, nil)) + string(h2cFrame(0x1, 0x4, 1, hb.Bytes()))
	var got []string
	e := NewEngine(nil, func(r *Request) { got = append(got, r.Proto.String()+" "+string(r.URL)) })
	seq := uint32(101)
	for _, f := range [][]byte{
		frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 100, syn: true}),
		frame(t, linkEth, tcpSeg{src: c, dst: s, seq: seq, ack: true, payload: connect}),
		frame(t, linkEth, tcpSeg{src: c, dst: s, seq: seq + uint32(len(connect)), ack: true, payload: h2}),
	} {
		e.Packet(&Packet{Data: f, Link: layers.LinkTypeEthernet})
	}
	e.asm.Flush()
	want := []string{"http inner.example:8081", "h2c http://inner.example:8081/no/authority"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
}

// The User-Agent a record carries: the first one, cut to MaxUserAgent
// bytes at a character's start (the cap reached, HTTP/1 and h2c alike),
// its control bytes percent-encoded like a path's.
func TestUserAgentCapAndText(t *testing.T) {
	long := strings.Repeat("é", MaxUserAgent) // 2 bytes each: 1024 bytes
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:8080")
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "h2.example"}, {":path", "/"}, {"user-agent", "x" + long}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	for _, tc := range []struct {
		name, stream, want string
	}{
		{"http1 long", "GET / HTTP/1.1\r\nHost: a.example\r\nUser-Agent: x" + long + "\r\nUser-Agent: second\r\n\r\n", "x" + long[:MaxUserAgent-2]},
		{"http1 controls", "GET / HTTP/1.1\r\nHost: a.example\r\nUser-Agent: evil\x1b[2J\x85\r\n\r\n", "evil%1B[2J%85"},
		{"http1 none", "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n", ""},
		{"h2c long", h2c.Preface + string(h2cFrame(0x4, 0, 0, nil)) + string(h2cFrame(0x1, 0x4, 1, hb.Bytes())), "x" + long[:MaxUserAgent-2]},
	} {
		var got []string
		e := NewEngine(nil, func(r *Request) { got = append(got, string(r.UserAgent)) })
		for _, f := range [][]byte{
			frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 100, syn: true}),
			frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 101, ack: true, payload: tc.stream}),
		} {
			e.Packet(&Packet{Data: f, Link: layers.LinkTypeEthernet})
		}
		e.asm.Flush()
		if len(got) != 1 || got[0] != tc.want || len(got[0]) > MaxUserAgent {
			t.Errorf("%s: %q (%d bytes), want %q", tc.name, got, len(strings.Join(got, "")), tc.want)
		}
	}
}
