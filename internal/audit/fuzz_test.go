package audit

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/http2/hpack"

	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/quic"
)

// What FuzzTextOutput's kind selects: the protocol the four fields are
// carried in, to the capture engine, as frames of a capture.
const (
	fzRaw     = iota // a: a client's TCP byte stream (any protocol the parser sniffs); b: a UDP datagram to 443
	fzHTTP1          // "a b HTTP/1.1", Host: c, X-Pad: d
	fzH2C            // prior knowledge: :method a, :path b, :authority c, :scheme d
	fzTLS            // a ClientHello over TCP: SNI c, ALPN a and b
	fzQUIC           // the same ClientHello in a QUIC v1 Initial
	fzSOCKS4         // SOCKS4a to the name c (user a), then "GET b HTTP/1.0" without Host
	fzSOCKS5         // SOCKS5 to the name c, then "GET b HTTP/1.0" without Host
	fzConnect        // "CONNECT c HTTP/1.1", then a ClientHello with SNI a in the tunnel
	fzKinds
)

// FuzzTextOutput carries arbitrary bytes in every field a record is made
// of, for every protocol the engine records (HTTP/1 request line and
// Host, h2c pseudo-headers, TLS and QUIC server names and ALPN, SOCKS
// destinations, CONNECT authorities, and raw streams and datagrams),
// through capture.Engine, and writes each record in every format (both
// verdicts). It checks capture's text rule: no record's URL or method
// holds a control, U+2028, U+2029 or a byte that is not UTF-8, and no
// line written holds any (but the tabs the All format puts between its
// columns), each record is exactly one line, each JSON line is one valid
// object whose url is the record's, and the text formats write the URL
// decided, unchanged.
func FuzzTextOutput(f *testing.F) {
	for _, s := range fuzzTextSeeds {
		f.Add(s.kind, []byte(s.a), []byte(s.b), []byte(s.c), []byte(s.d))
	}
	// The seeds reach every protocol: the harness builds real requests.
	var seen [capture.NumProtos]int
	for _, s := range fuzzTextSeeds {
		fuzzRecords(f, s.kind, []byte(s.a), []byte(s.b), []byte(s.c), []byte(s.d), func(r *capture.Request) { seen[r.Proto]++ })
	}
	for p, n := range seen {
		if n == 0 {
			f.Fatalf("no seed made a %v record", capture.Proto(p))
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, a, b, c, d []byte) {
		var out bytes.Buffer
		l := &Log{w: &out, buf: make([]byte, 0, 512)}
		fuzzRecords(t, kind, a, b, c, d, func(r *capture.Request) {
			if !capture.TextSafe(r.URL) || !capture.TextSafe(r.Method) || !capture.TextSafe(r.UserAgent) || len(r.UserAgent) > 3*capture.MaxUserAgent {
				t.Fatalf("a %v record: method %q, URL %q, User-Agent %q", r.Proto, r.Method, r.URL, r.UserAgent)
			}
			for _, format := range []Format{NewURLs, All, JSON, NewJSON, ECS, NewECS} {
				for _, seen := range []bool{false, true} {
					out.Reset()
					l.format = format
					l.write(r, seen)
					checkLine(t, r, format, seen, out.String())
				}
			}
		})
	})
}

// checkLine checks what write wrote for r.
func checkLine(t *testing.T, r *capture.Request, format Format, seen bool, line string) {
	t.Helper()
	if line == "" && seen && (format == NewURLs || format == NewJSON || format == NewECS) {
		return
	}
	body, ok := strings.CutSuffix(line, "\n")
	if !ok || strings.Contains(body, "\n") {
		t.Fatalf("format %d: not one line: %q", format, line)
	}
	switch format {
	case NewURLs:
		if body != string(r.URL) {
			t.Fatalf("wrote %q for the URL %q", body, r.URL)
		}
	case All:
		verdict := "new\t"
		if seen {
			verdict = "dup\t"
		}
		u, ok := strings.CutPrefix(body, verdict)
		if r.Tunnel {
			u, ok = strings.CutSuffix(u, "\ttunnel")
		}
		if !ok || u != string(r.URL) {
			t.Fatalf("wrote %q for the URL %q", line, r.URL)
		}
		body = u
	case JSON, NewJSON:
		var rec struct {
			URL       string
			UserAgent string `json:"user_agent"`
		}
		if err := json.Unmarshal([]byte(body), &rec); err != nil || rec.URL != string(r.URL) || rec.UserAgent != string(r.UserAgent) {
			t.Fatalf("%q: %v, url %q, want %q", line, err, rec.URL, r.URL)
		}
	case ECS, NewECS:
		var doc struct {
			URL       struct{ Original string }
			UserAgent struct{ Original string } `json:"user_agent"`
		}
		if err := json.Unmarshal([]byte(body), &doc); err != nil || doc.URL.Original != string(r.URL) || doc.UserAgent.Original != string(r.UserAgent) {
			t.Fatalf("%q: %v, url %q, want %q", line, err, doc.URL.Original, r.URL)
		}
	}
	if !utf8.ValidString(body) {
		t.Fatalf("format %d: not UTF-8: %q", format, line)
	}
	for _, c := range body {
		if c < 0x20 || c >= 0x7f && c <= 0x9f || c == 0x2028 || c == 0x2029 {
			t.Fatalf("format %d: %U in %q", format, c, line)
		}
	}
}

var fuzzTextSeeds = []struct {
	kind       uint8
	a, b, c, d string
}{
	{fzHTTP1, "GET", "/x/a", "one.example\rdup\thttp://forged.example", "pad"},
	{fzHTTP1, "GET", "/x/\u0085\u2028\u2029\x9b[2J", "esc.example\x1b[2J\x00\v\f\x7f\u0085\u2028\u2029\xc0", "\x1b]0;t\x07"},
	{fzHTTP1, "CONNECT", "tunnel.example:443\u2028dup", "h", ""},
	{fzHTTP1, "OPTIONS", "*", "opt.example\t", ""},
	{fzHTTP1, "GET", "http://abs.example/\u0085", "ignored", ""},
	{fzH2C, "GET", "/a\nnew\thttp://forged.example/\r", "h2.example\u2028\u0085\x1b[", "http"},
	{fzH2C, "G\x1bET\r\n", "/p", "h2.example", "ht\ttp"},
	{fzH2C, "CONNECT", "", "h2tunnel.example:443\r\n", ""},
	{fzTLS, "h2", "http/1.1\r\n", "tls.example\rdup\thttps://forged.example", ""},
	{fzTLS, "\x1b[31m", "", "tls.example\u0085\u2028\x9b", ""},
	{fzQUIC, "h3", "\u2029", "quic.example\rdup\thttps://forged.example", ""},
	{fzSOCKS4, "user\r\n", "/s4", "socks4.example\r\ndup\t", ""},
	{fzSOCKS5, "", "/s5\u2028", "socks5.example\x1b[2J\u0085", ""},
	{fzConnect, "sni.example\r\n\t", "", "proxy.example:443\u2028", ""},
	{fzRaw, "GET /raw HTTP/1.1\r\nHost: raw.example\rx\r\n\r\n", "\xc3\x00", "", ""},
}

// fuzzRecords runs the frames of one kind of input through a
// capture.Engine, calling emit for each record.
func fuzzRecords(t testing.TB, kind uint8, a, b, c, d []byte, emit func(*capture.Request)) {
	const most = 1000 // per field: frames stay within 16 KiB records and frames
	a, b, c, d = a[:min(len(a), most)], b[:min(len(b), most)], c[:min(len(c), most)], d[:min(len(d), most)]
	name := func(s []byte) []byte { return s[:min(len(s), 255)] }
	var src fuzzSource
	switch kind % fzKinds {
	case fzRaw:
		src.tcp(t, 80, a)
		src.udp(t, 443, b)
	case fzHTTP1:
		src.tcp(t, 80, cat(a, " ", b, " HTTP/1.1\r\nHost: ", c, "\r\nUser-Agent: ", d, "\r\n\r\n"))
	case fzH2C:
		var hb bytes.Buffer
		enc := hpack.NewEncoder(&hb)
		for _, fld := range [][2][]byte{{[]byte(":method"), a}, {[]byte(":scheme"), d}, {[]byte(":authority"), c}, {[]byte(":path"), b}, {[]byte("user-agent"), d}} {
			if len(fld[1]) > 0 {
				enc.WriteField(hpack.HeaderField{Name: string(fld[0]), Value: string(fld[1])})
			}
		}
		src.tcp(t, 8080, cat("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", h2Frame(0x4, 0, 0, nil), h2Frame(0x1, 0x5, 1, hb.Bytes())))
	case fzTLS:
		src.tcp(t, 443, tlsRecord(clientHello(c, name(a), name(b))))
	case fzQUIC:
		frames := quic.AppendCryptoFrame(nil, 0, clientHello(c, name(a), name(b)))
		frames = append(frames, make([]byte, max(0, 1162-len(frames)))...) // padded to 1,200 bytes
		src.udp(t, 443, quic.SealClientInitial(quic.Version1, []byte("fuzzdcid"), []byte("scid"), 0, frames))
	case fzSOCKS4:
		noNUL := func(s []byte) []byte { return bytes.ReplaceAll(s, []byte{0}, nil) }
		src.tcp(t, 1080, cat("\x04\x01\x00\x50\x00\x00\x00\x01", noNUL(a), "\x00", noNUL(c), "\x00GET ", b, " HTTP/1.0\r\n\r\n"))
	case fzSOCKS5:
		src.tcp(t, 1080, cat("\x05\x01\x00\x05\x01\x00\x03", []byte{byte(len(name(c)))}, name(c), "\x1f\x90GET ", b, " HTTP/1.0\r\n\r\n"))
	case fzConnect:
		src.tcp(t, 3128, cat("CONNECT ", c, " HTTP/1.1\r\n\r\n", tlsRecord(clientHello(a))))
	}
	e := capture.NewEngine(nil, emit)
	if err := e.Run(context.Background(), &src); err != nil {
		t.Fatal(err)
	}
}

// cat joins strings and byte slices.
func cat(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			b = append(b, p...)
		case []byte:
			b = append(b, p...)
		}
	}
	return b
}

func h2Frame(typ, flags byte, stream uint32, payload []byte) []byte {
	n := len(payload)
	b := []byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags}
	b = binary.BigEndian.AppendUint32(b, stream)
	return append(b, payload...)
}

// clientHello is a TLS 1.3 ClientHello handshake message offering the
// server name sni (none when empty) and the ALPN protocols given (empty
// ones left out).
func clientHello(sni []byte, alpn ...[]byte) []byte {
	ext := func(b []byte, typ uint16, body []byte) []byte {
		b = binary.BigEndian.AppendUint16(b, typ)
		b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
		return append(b, body...)
	}
	var exts []byte
	if len(sni) > 0 {
		e := binary.BigEndian.AppendUint16(nil, uint16(len(sni)+3))
		e = append(e, 0)
		e = binary.BigEndian.AppendUint16(e, uint16(len(sni)))
		exts = ext(exts, 0x0000, append(e, sni...))
	}
	var list []byte
	for _, p := range alpn {
		if len(p) > 0 {
			list = append(append(list, byte(len(p))), p...)
		}
	}
	if len(list) > 0 {
		exts = ext(exts, 0x0010, append(binary.BigEndian.AppendUint16(nil, uint16(len(list))), list...))
	}
	exts = ext(exts, 0x002b, []byte{2, 3, 4})
	body := append([]byte{3, 3}, make([]byte, 32)...) // legacy version, random
	body = append(body, 0, 0, 2, 0x13, 0x01, 1, 0)    // no session id, TLS_AES_128_GCM_SHA256, no compression
	body = binary.BigEndian.AppendUint16(body, uint16(len(exts)))
	body = append(body, exts...)
	return append([]byte{1, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
}

func tlsRecord(msg []byte) []byte {
	return append(binary.BigEndian.AppendUint16([]byte{0x16, 3, 1}, uint16(len(msg))), msg...)
}

// fuzzSource is a capture of raw IPv4 frames: TCP connections (SYN, data
// in segments of up to 1,400 bytes, FIN) and UDP datagrams from a client.
type fuzzSource struct {
	frames [][]byte
	port   uint16 // the client's next port
}

func (s *fuzzSource) tcp(t testing.TB, dst uint16, data []byte) {
	s.port++
	seq := uint32(1000)
	s.add(t, &layers.TCP{SrcPort: layers.TCPPort(40000 + s.port), DstPort: layers.TCPPort(dst), Seq: seq - 1, SYN: true, Window: 65535}, nil)
	for len(data) > 0 {
		n := min(len(data), 1400)
		s.add(t, &layers.TCP{SrcPort: layers.TCPPort(40000 + s.port), DstPort: layers.TCPPort(dst), Seq: seq, ACK: true, PSH: true, Window: 65535}, data[:n])
		seq += uint32(n)
		data = data[n:]
	}
	s.add(t, &layers.TCP{SrcPort: layers.TCPPort(40000 + s.port), DstPort: layers.TCPPort(dst), Seq: seq, ACK: true, FIN: true, Window: 65535}, nil)
}

func (s *fuzzSource) udp(t testing.TB, dst uint16, data []byte) {
	if len(data) == 0 {
		return
	}
	s.port++
	s.add(t, &layers.UDP{SrcPort: layers.UDPPort(40000 + s.port), DstPort: layers.UDPPort(dst)}, data)
}

func (s *fuzzSource) add(t testing.TB, l4 interface {
	gopacket.SerializableLayer
	SetNetworkLayerForChecksum(gopacket.NetworkLayer) error
}, payload []byte) {
	proto := layers.IPProtocolTCP
	if _, ok := l4.(*layers.UDP); ok {
		proto = layers.IPProtocolUDP
	}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: proto, SrcIP: net.IP{192, 0, 2, 10}, DstIP: net.IP{192, 0, 2, 1}}
	l4.SetNetworkLayerForChecksum(ip)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ip, l4, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	s.frames = append(s.frames, append([]byte(nil), buf.Bytes()...))
}

func (s *fuzzSource) Next(p *capture.Packet) error {
	if len(s.frames) == 0 {
		return io.EOF
	}
	*p = capture.Packet{Data: s.frames[0], Link: layers.LinkTypeRaw,
		Info: gopacket.CaptureInfo{Timestamp: time.Unix(1_700_000_000, 0), CaptureLength: len(s.frames[0]), Length: len(s.frames[0])}}
	s.frames = s.frames[1:]
	return nil
}

func (s *fuzzSource) Drops() uint64 { return 0 }
func (s *fuzzSource) Close() error  { return nil }

// JSON strings hold no raw control, U+2028 or U+2029: they are \u
// escapes (as encoding/json writes U+2028 and U+2029), and what is not
// UTF-8 is U+FFFD.
func TestJSONStringTextRule(t *testing.T) {
	got := string(appendJSONString(nil, []byte("a\x00\t\x1b\x7f\u0085\u009f\u2028\u2029\x9b\"\\é\u202e")))
	want := `"a\u0000\u0009\u001b\u007f\u0085\u009f\u2028\u2029\ufffd\"\\é` + "\u202e" + `"`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	var s string
	if err := json.Unmarshal([]byte(got), &s); err != nil || s != "a\x00\t\x1b\x7f\u0085\u009f\u2028\u2029\ufffd\"\\é\u202e" {
		t.Fatalf("%q: %v", s, err)
	}
}
