package tlshello_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// protocols and versions list what a Hello holds, for comparison.
func protocols(h *tlshello.Hello) []string {
	var out []string
	for l := h.ALPN; ; {
		name, rest, ok := tlshello.NextProtocol(l)
		if !ok {
			return out
		}
		out, l = append(out, string(name)), rest
	}
}

func versions(h *tlshello.Hello) []string {
	var out []string
	for l := h.Versions; ; {
		v, rest, ok := tlshello.NextVersion(l)
		if !ok {
			return out
		}
		out, l = append(out, tlshello.VersionName(v)), rest
	}
}

// The ClientHellos real clients sent (scripts/make-tlshello-testdata.sh
// says how each was made); the expected names are what the script asked
// each client for.
func TestParseRealClients(t *testing.T) {
	tests := []struct {
		file     string
		sni      string
		alpn     []string
		versions []string
		ech      bool
	}{
		{"go-default", "go.example", []string{"h2", "http/1.1"}, []string{"TLS 1.3", "TLS 1.2"}, false},
		{"go-tls12", "tls12.go.example", []string{"h2", "http/1.1"}, []string{"TLS 1.2"}, false},
		// ECH: the outer hello carries the configuration's public name.
		{"go-ech", "public.example", []string{"http/1.1"}, []string{"TLS 1.3"}, true},
		{"openssl-tls13", "openssl.example", nil, []string{"TLS 1.3"}, false},
		{"openssl-nosni", "", nil, []string{"TLS 1.3", "TLS 1.2", "TLS 1.1", "TLS 1.0"}, false},
		{"openssl-tls12-alpn", "alpn.example", []string{"h2", "http/1.1", "http/1.0", "spdy/3", "spdy/2", "spdy/1", "h3", "h3-29",
			"stun.turn", "webrtc", "c-webrtc", "ftp", "imap", "pop3", "managesieve", "coap", "xmpp-client", "xmpp-server",
			"acme-tls/1", "mqtt", "dot", "ntske/1", "sunrpc", "irc", "smb", "postgresql"}, []string{"TLS 1.2"}, false},
		{"curl", "curl.example", []string{"h2", "http/1.1"}, []string{"TLS 1.3", "TLS 1.2", "TLS 1.1", "TLS 1.0"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			msg, err := os.ReadFile(filepath.Join("testdata", tt.file+".hello"))
			if err != nil {
				t.Fatal(err)
			}
			if n, ok := tlshello.HandshakeLen(msg); !ok || n != len(msg) {
				t.Errorf("HandshakeLen = %d, %v; want %d, true", n, ok, len(msg))
			}
			var h tlshello.Hello
			if err := tlshello.Parse(msg, &h); err != nil {
				t.Fatal(err)
			}
			if string(h.ServerName) != tt.sni {
				t.Errorf("ServerName %q, want %q", h.ServerName, tt.sni)
			}
			if got := protocols(&h); !slices.Equal(got, tt.alpn) {
				t.Errorf("ALPN %q, want %q", got, tt.alpn)
			}
			if got := versions(&h); !slices.Equal(got, tt.versions) {
				t.Errorf("versions %q, want %q", got, tt.versions)
			}
			if h.ECH != tt.ech {
				t.Errorf("ECH %v, want %v", h.ECH, tt.ech)
			}
			// Every strict prefix is incomplete: an error, never a panic.
			for i := range len(msg) {
				if err := tlshello.Parse(msg[:i], &h); !errors.Is(err, tlshello.ErrTruncated) {
					t.Fatalf("Parse(first %d bytes) = %v, want ErrTruncated", i, err)
				}
			}
		})
	}
}

// The largest hello, Go's with an X25519MLKEM768 key share, does not fit
// in one 1,460-byte TCP segment: the reason reassembly is needed.
func TestGoHelloIsLarge(t *testing.T) {
	msg, err := os.ReadFile("testdata/go-default.hello")
	if err != nil {
		t.Fatal(err)
	}
	if len(msg)+5 <= 1460 {
		t.Errorf("Go's default ClientHello is %d bytes: expected a post-quantum key share to make it larger than a segment", len(msg))
	}
}

// hello builds a ClientHello around the extensions given.
func hello(exts ...[]byte) []byte {
	body := []byte{3, 3}
	body = append(body, make([]byte, 32)...)    // random
	body = append(body, 0)                      // session id
	body = append(body, 0, 2, 0x13, 0x01, 1, 0) // one suite, null compression
	var e []byte
	for _, x := range exts {
		e = append(e, x...)
	}
	body = binary.BigEndian.AppendUint16(body, uint16(len(e)))
	body = append(body, e...)
	return append([]byte{1, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
}

// relength sets the handshake header's length to what follows it.
func relength(m []byte) []byte {
	n := len(m) - 4
	m[1], m[2], m[3] = byte(n>>16), byte(n>>8), byte(n)
	return m
}

func ext(typ uint16, data []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...)
}

func sni(name string) []byte {
	entry := append([]byte{0}, binary.BigEndian.AppendUint16(nil, uint16(len(name)))...)
	entry = append(entry, name...)
	return ext(0, append(binary.BigEndian.AppendUint16(nil, uint16(len(entry))), entry...))
}

func TestParseHostile(t *testing.T) {
	tests := []struct {
		name string
		msg  []byte
		err  error
		sni  string
	}{
		{"well formed", hello(sni("a.example")), nil, "a.example"},
		{"no extensions", relength(hello()[:4+2+32+1+4+2]), nil, ""}, // TLS 1.2 allows it
		{"server hello", append([]byte{2}, hello()[1:]...), tlshello.ErrNotClientHello, ""},
		{"empty", nil, tlshello.ErrTruncated, ""},
		{"sni repeated", hello(sni("a.example"), sni("b.example")), tlshello.ErrDuplicate, ""},
		{"ech repeated", hello(ext(0xfe0d, []byte{0}), ext(0xfe0d, []byte{0})), tlshello.ErrDuplicate, ""},
		{"grease repeated is allowed", hello(ext(0x0a0a, nil), ext(0x0a0a, nil), sni("g.example")), nil, "g.example"},
		{"extension length lies", hello(ext(0, []byte{0, 5, 0, 0, 3, 'a'})), tlshello.ErrMalformed, ""},
		{"sni list longer than extension", hello(ext(0, []byte{0xff, 0xff, 0})), tlshello.ErrMalformed, ""},
		{"sni name longer than list", hello(ext(0, []byte{0, 4, 0, 0xff, 0xff, 'a'})), tlshello.ErrMalformed, ""},
		{"empty sni extension", hello(ext(0, nil)), nil, ""},
		{"alpn empty name", hello(ext(16, []byte{0, 1, 0})), tlshello.ErrMalformed, ""},
		{"alpn name runs past", hello(ext(16, []byte{0, 2, 5, 'h'})), tlshello.ErrMalformed, ""},
		{"versions odd", hello(ext(43, []byte{3, 3, 4, 3})), tlshello.ErrMalformed, ""},
		{"versions empty", hello(ext(43, []byte{0})), tlshello.ErrMalformed, ""},
		{"trailing bytes in the body", func() []byte {
			m := hello(sni("t.example"))
			return relength(append(m, 0xde, 0xad))
		}(), tlshello.ErrMalformed, ""},
		{"huge handshake length", append([]byte{1, 0xff, 0xff, 0xff}, hello()[4:]...), tlshello.ErrTruncated, ""},
		{"session id too long", func() []byte {
			m := hello()
			m[4+2+32] = 33
			return m
		}(), tlshello.ErrMalformed, ""},
		{"odd cipher suites", func() []byte {
			m := hello()
			m[4+2+32+1+1] = 3
			return m
		}(), tlshello.ErrMalformed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h tlshello.Hello
			err := tlshello.Parse(tt.msg, &h)
			if tt.err == nil && err != nil || tt.err != nil && !errors.Is(err, tt.err) {
				t.Fatalf("Parse = %v, want %v", err, tt.err)
			}
			if string(h.ServerName) != tt.sni {
				t.Errorf("ServerName %q, want %q", h.ServerName, tt.sni)
			}
		})
	}
}

// Many extensions, each checked for repeats: the check stays linear.
func TestParseManyExtensions(t *testing.T) {
	var exts [][]byte
	for i := range 16000 {
		exts = append(exts, ext(uint16(0x1000+i), nil))
	}
	exts = append(exts, sni("last.example"))
	var h tlshello.Hello
	if err := tlshello.Parse(hello(exts...), &h); err != nil {
		t.Fatal(err)
	}
	if string(h.ServerName) != "last.example" {
		t.Errorf("ServerName %q", h.ServerName)
	}
}

func TestGREASEAndVersionNames(t *testing.T) {
	for _, v := range []uint16{0x0a0a, 0x1a1a, 0xfafa} {
		if !tlshello.IsGREASE(v) {
			t.Errorf("IsGREASE(%#x) false", v)
		}
	}
	for _, v := range []uint16{0x0304, 0x0a1a, 0x0b0b, 0x7f1c} {
		if tlshello.IsGREASE(v) {
			t.Errorf("IsGREASE(%#x) true", v)
		}
	}
	for v, want := range map[uint16]string{0x0304: "TLS 1.3", 0x0303: "TLS 1.2", 0x0300: "SSL 3.0", 0x7f1c: "0x7f1c", 0xfe0d: "0xfe0d"} {
		if got := tlshello.VersionName(v); got != want {
			t.Errorf("VersionName(%#x) = %q, want %q", v, got, want)
		}
	}
}

func TestParseAllocatesNothing(t *testing.T) {
	msg, err := os.ReadFile("testdata/go-default.hello")
	if err != nil {
		t.Fatal(err)
	}
	var h tlshello.Hello
	if n := testing.AllocsPerRun(100, func() {
		if err := tlshello.Parse(msg, &h); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Parse allocates %v times", n)
	}
}

func BenchmarkParse(b *testing.B) {
	msg, err := os.ReadFile("testdata/go-default.hello")
	if err != nil {
		b.Fatal(err)
	}
	var h tlshello.Hello
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		tlshello.Parse(msg, &h)
	}
}
