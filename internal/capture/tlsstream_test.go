package capture

import (
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// realHello returns a ClientHello a real client sent (internal/tlshello's test
// data): the handshake message, without record headers.
func realHello(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("..", "tlshello", "testdata", name+".hello"))
	if err != nil {
		if t == nil {
			panic(err)
		}
		t.Fatal(err)
	}
	return b
}

// helloSnippet is the index in fuzzSnippets of a curl ClientHello in one
// record; the next is Go's, larger than a segment, in records of 300 bytes.
var helloSnippet = func() int {
	fuzzSnippets = append(fuzzSnippets, string(records(realHello(nil, "curl"), 1<<14)),
		string(records(realHello(nil, "go-default"), 300)))
	return len(fuzzSnippets) - 2
}()

// records wraps msg in TLS handshake records of at most size bytes each.
func records(msg []byte, size int) []byte {
	var out []byte
	for len(msg) > 0 {
		n := min(size, len(msg))
		out = append(out, 0x16, 3, 1)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
		out = append(out, msg[:n]...)
		msg = msg[n:]
	}
	return out
}

// helloRecords collects the records an Assembler reports with their
// Proto, and the TLS counts.
func helloRecords(t *testing.T, opts *AssemblerOptions, segs []*Segment) ([]string, *assembler) {
	t.Helper()
	var got []string
	a := newAssembler(opts, func(r *Request) {
		s := r.Proto.String() + " " + string(r.Method) + string(r.URL)
		if r.Hello.ECH {
			s += " ech"
		}
		got = append(got, s)
	})
	for _, s := range segs {
		a.Add(time.Unix(1000, 0), s)
	}
	a.Flush()
	return got, a
}

func TestTLSHelloInStream(t *testing.T) {
	big := realHello(t, "go-default") // 1,511 bytes: more than a segment
	c := conn{cli, srv, 1000}         // server port 80
	c443 := conn{cli, netip.MustParseAddrPort("192.0.2.2:443"), 2000}
	segments := func(c conn, stream []byte, size int) []*Segment {
		segs := []*Segment{c.syn()}
		for off := 0; off < len(stream); off += size {
			segs = append(segs, c.at(off, string(stream[off:min(off+size, len(stream))])))
		}
		return segs
	}
	ciphertext := "\x17\x03\x03\x00\x30" + req("/not-http") // application data that looks like HTTP inside
	tests := []struct {
		name string
		segs []*Segment
		want []string
		tls  TLSStats
	}{
		{"one record, one segment, port 443", segments(c443, records(realHello(t, "curl"), 1<<14), 1460),
			[]string{"tls https://curl.example/"}, TLSStats{}},
		{"odd port kept", segments(c, records(realHello(t, "curl"), 1<<14), 1460),
			[]string{"tls https://curl.example:80/"}, TLSStats{}},
		{"large hello over several segments", segments(c443, records(big, 1<<14), 500),
			[]string{"tls https://go.example/"}, TLSStats{}},
		{"over several records and segments, split inside headers", segments(c443, records(big, 100), 7),
			[]string{"tls https://go.example/"}, TLSStats{}},
		{"records of 1 byte", segments(c443, records(big, 1), 1460),
			[]string{"tls https://go.example/"}, TLSStats{}},
		{"no SNI: the server's address", segments(c443, records(realHello(t, "openssl-nosni"), 1<<14), 1460),
			[]string{"tls https://192.0.2.2/"}, TLSStats{NoSNI: 1}},
		{"ECH: the public name, flagged", segments(c443, records(realHello(t, "go-ech"), 1<<14), 1460),
			[]string{"tls https://public.example/ ech"}, TLSStats{ECH: 1}},
		{"ciphertext after the hello is never parsed", segments(c443, append(records(realHello(t, "curl"), 1<<14), ciphertext...), 1460),
			[]string{"tls https://curl.example/"}, TLSStats{}},
		{"a stream picked up after its hello", segments(c443, []byte(ciphertext), 1460), nil, TLSStats{}},
		{"another handshake message first", segments(c443, records(append([]byte{2}, big[1:]...), 1<<14), 1460), nil, TLSStats{}},
		{"a hello cut by an alert record", segments(c443, append(records(big, 500)[:505], "\x15\x03\x03\x00\x02\x02\x28"+req("/x")...), 1460),
			nil, TLSStats{Errors: 1}},
		{"a hello that does not parse", segments(c443, records(append(append([]byte(nil), big[:4+2+32]...), 0xff), 1<<14), 1460),
			nil, TLSStats{}}, // cut: its length says more is to come
		{"a hello whose lengths lie", segments(c443, records(func() []byte {
			m := append([]byte(nil), realHello(t, "curl")...)
			m[4+2+32] = 200 // session id length
			return m
		}(), 1<<14), 1460), nil, TLSStats{Errors: 1}},
		{"over MaxHello", segments(c443, records(append([]byte{1, 0x01, 0x00, 0x00}, make([]byte, 3000)...), 1<<14), 1460),
			nil, TLSStats{TooLarge: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, a := helloRecords(t, nil, tt.segs)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("records %q, want %q", got, tt.want)
			}
			var st Stats
			a.parsers.(*tcpProtocols).stats(&st)
			if st.TLS != tt.tls {
				t.Errorf("TLS stats %+v, want %+v", st.TLS, tt.tls)
			}
			if n := st.Assembler.NonHTTP[StreamTLS]; n != 1 {
				t.Errorf("%d TLS streams counted, want 1", n)
			}
			if st.Assembler.Requests != 0 || st.Assembler.ParseErrors != 0 || a.Buffered() != 0 {
				t.Errorf("stats %+v, buffered %d", st.Assembler, a.Buffered())
			}
		})
	}
}

// The hello inside a CONNECT tunnel is recorded with the port the tunnel
// opened, not the proxy's.
func TestTLSHelloInConnectTunnel(t *testing.T) {
	c := conn{cli, netip.MustParseAddrPort("192.0.2.2:3128"), 1000}
	stream := "CONNECT secure.example:8443 HTTP/1.1\r\nHost: secure.example:8443\r\n\r\n" + string(records(realHello(t, "curl"), 1<<14))
	got, _ := helloRecords(t, nil, []*Segment{c.syn(), c.at(0, stream)})
	want := []string{"http CONNECTsecure.example:8443", "tls https://curl.example:8443/"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records %q, want %q", got, want)
	}
}

// The memory caps hold for a hello being collected: over MaxFlowBuffer it
// is dropped and counted, the stream skipped, nothing held.
func TestTLSHelloOverFlowBuffer(t *testing.T) {
	big := realHello(t, "go-default")
	c := conn{cli, netip.MustParseAddrPort("192.0.2.2:443"), 1000}
	stream := records(big, 200)
	segs := []*Segment{c.syn()}
	for off := 0; off < len(stream); off += 300 {
		segs = append(segs, c.at(off, string(stream[off:min(off+300, len(stream))])))
	}
	// MaxFlowBuffer below the hello's 1,511 bytes.
	got, a := helloRecords(t, &AssemblerOptions{MaxFlowBuffer: 1024}, segs)
	if len(got) != 0 || a.Stats.Overflows != 1 || a.Buffered() != 0 {
		t.Errorf("records %q, overflows %d, buffered %d", got, a.Stats.Overflows, a.Buffered())
	}
	got, _ = helloRecords(t, &AssemblerOptions{MaxFlowBuffer: 2048}, segs)
	if len(got) != 1 {
		t.Errorf("under the cap: records %q", got)
	}
}

// With tls not selected the stream is skipped as before.
func TestTLSHelloNotSelected(t *testing.T) {
	c := conn{cli, netip.MustParseAddrPort("192.0.2.2:443"), 1000}
	var got []string
	var sp *tcpProtocols
	a := newProtoAssembler(nil, func(r *Request) { got = append(got, string(r.URL)) }, 1<<ProtoHTTP, &sp)
	a.Add(time.Unix(1000, 0), c.syn())
	a.Add(time.Unix(1000, 0), c.at(0, string(records(realHello(t, "curl"), 1<<14))))
	a.Flush()
	if len(got) != 0 || sp.Stats.NonHTTP[StreamTLS] != 1 {
		t.Errorf("records %q, stats %+v", got, sp.Stats)
	}
}

// After its ClientHello a TLS connection costs no allocation per segment;
// nor does a hello that lies whole in one segment.
func TestTLSAllocations(t *testing.T) {
	a := newAssembler(nil, func(*Request) {})
	ts := time.Unix(1000, 0)
	hello := records(realHello(t, "curl"), 1<<14)
	cipher := make([]byte, 1400)
	copy(cipher, "\x17\x03\x03\x05\x73")
	c := conn{cli, netip.MustParseAddrPort("192.0.2.2:443"), 1000}
	a.Add(ts, c.syn())
	a.Add(ts, c.at(0, string(hello)))
	off := len(hello)
	seg := &Segment{Src: c.src, Dst: c.dst, ACK: true, Payload: cipher}
	if n := testing.AllocsPerRun(200, func() {
		seg.Seq = c.isn + 1 + uint32(off)
		a.Add(ts, seg)
		off += len(cipher)
	}); n != 0 {
		t.Errorf("%v allocations per segment after the hello", n)
	}
}
