package capture

import (
	"bytes"
	"context"
	"io"
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/http2/hpack"

	"github.com/urldedupd/urldedupd/internal/h2c"
)

// The text rule: what it forbids, and how AppendTextSafe writes it.
func TestTextRule(t *testing.T) {
	for _, tc := range []struct {
		in, out string
	}{
		{"http://a.example/p?q=1#f", "http://a.example/p?q=1#f"},
		{"http://bücher.example/ü €", "http://bücher.example/ü €"}, // UTF-8 and space are allowed
		{"\x00\t\n\v\f\r\x1b\x7f", "%00%09%0A%0B%0C%0D%1B%7F"},
		{"a\u0085b\u0080\u009fc", "a%C2%85b%C2%80%C2%9Fc"},             // C1 as UTF-8, NEL among them
		{"\u2028\u2029\u2027\u202a", "%E2%80%A8%E2%80%A9\u2027\u202a"}, // only the two separators
		{"\x9b2J\x85\xc2\xe2\x80", "%9B2J%85%C2%E2%80"},                // bytes that are not UTF-8 (CSI, NEL to an 8-bit terminal; cut sequences)
		{"\ufffd\U0010ffff", "\ufffd\U0010ffff"},
		{"%0D", "%0D"},
	} {
		got := string(AppendTextSafe([]byte("x"), []byte(tc.in)))
		if got != "x"+tc.out {
			t.Errorf("AppendTextSafe(%q) = %q, want %q", tc.in, got[1:], tc.out)
		}
		if safe := TextSafe([]byte(tc.in)); safe != (tc.in == tc.out) {
			t.Errorf("TextSafe(%q) = %v", tc.in, safe)
		}
		if !TextSafe([]byte(got)) {
			t.Errorf("TextSafe(AppendTextSafe(%q)) = false", tc.in)
		}
	}
}

// An HTTP/1 Host header may carry any byte but LF, and the request target
// any byte but controls and space: each reaches the record's URL held to
// the text rule, so that "new\thttp://one.example\rdup\thttp://forged..."
// cannot be written. The Host is taken as an SNI or an h2c :authority is
// (what the rule forbids, and what would end the host, made '_'), the
// target's forbidden characters percent-encoded. SOCKS destinations and
// TLS server names follow the same rule, multi-byte characters included.
func TestHTTP1HostileHostInURL(t *testing.T) {
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:80")
	for _, tc := range []struct {
		name, payload, want string
	}{
		{"cr and tab", "GET /x/a HTTP/1.1\r\nHost: one.example\rdup\thttp://forged.example\r\n\r\n", "http://one.example_dup_http:__forged.example/x/a"},
		{"esc", "GET /x HTTP/1.1\r\nHost: e.example\x1b[2J\x1b]0;t\x07\r\n\r\n", "http://e.example_[2J_]0;t_/x"},
		{"nul vt ff del", "GET /x HTTP/1.1\r\nHost: n\x00v\vf\fd\x7f.example\r\n\r\n", "http://n_v_f_d_.example/x"},
		{"nel and separators", "GET /x HTTP/1.1\r\nHost: a\u0085b\u2028c\u2029d.example\r\n\r\n", "http://a_b_c_d.example/x"},
		{"not utf-8", "GET /x HTTP/1.1\r\nHost: csi\x9b2J\xc3.example\r\n\r\n", "http://csi_2J_.example/x"},
		{"delimiters", "GET /x HTTP/1.1\r\nHost: a.example/p?q#f@u v\r\n\r\n", "http://a.example_p_q_f_u_v/x"},
		{"utf-8 host kept", "GET /x HTTP/1.1\r\nHost: bücher.example:8080\r\n\r\n", "http://bücher.example:8080/x"},
		{"target", "GET /x/\u0085\u2028\x9b?q=\u2029 HTTP/1.1\r\nHost: t.example\r\n\r\n", "http://t.example/x/%C2%85%E2%80%A8%9B?q=%E2%80%A9"},
		{"absolute target", "GET http://abs.example/\u0085 HTTP/1.1\r\nHost: ignored\r\n\r\n", "http://abs.example/%C2%85"},
		{"connect", "CONNECT tun.example:443\u2028 HTTP/1.1\r\n\r\n", "tun.example:443%E2%80%A8"},
		{"socks5 name", "\x05\x01\x00\x05\x01\x00\x03\x0bs5\u0085\x1b\u2028.ex\x00\x50GET /s HTTP/1.0\r\n\r\n", "http://s5___.ex/s"},
	} {
		var got []string
		e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)) })
		for _, f := range [][]byte{
			frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 100, syn: true}),
			frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 101, ack: true, payload: tc.payload}),
		} {
			e.Packet(&Packet{Data: f, Link: layers.LinkTypeEthernet})
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: records %q, want [%q]", tc.name, got, tc.want)
		}
	}
}

// forgedHosts are HTTP/1 requests whose Host header (or target) carries
// bytes that would forge a record in the text output: a lone CR and a tab
// made "new\thttp://one.example\rdup\thttp://forged.example/x/a", read as
// two records. want is the URL recorded: the Host's forbidden characters
// made '_' (as an SNI's or an h2c :authority's are), the target's
// percent-encoded. cmd/urldedupd's TestReplayForgedHostRecords writes the
// same requests through replay's outputs.
var forgedHosts = []struct {
	name, host, target, want string
}{
	{"cr and tab", "one.example\rdup\thttp://forged.example", "/x/a", "http://one.example_dup_http:__forged.example/x/a"},
	{"tab", "tab.example\tdup", "/x/a", "http://tab.example_dup/x/a"},
	{"lone cr", "cr.example\rdup", "/x/a", "http://cr.example_dup/x/a"},
	{"esc", "esc.example\x1b[2J\x1b]0;title\x07", "/x/a", "http://esc.example_[2J_]0;title_/x/a"},
	{"nul", "nul.example\x00dup", "/x/a", "http://nul.example_dup/x/a"},
	{"vt", "vt.example\vdup", "/x/a", "http://vt.example_dup/x/a"},
	{"ff", "ff.example\fdup", "/x/a", "http://ff.example_dup/x/a"},
	{"del", "del.example\x7fdup", "/x/a", "http://del.example_dup/x/a"},
	{"nel", "nel.example\u0085dup", "/x/a", "http://nel.example_dup/x/a"},
	{"line separator", "ls.example\u2028dup", "/x/a", "http://ls.example_dup/x/a"},
	{"paragraph separator", "ps.example\u2029dup", "/x/a", "http://ps.example_dup/x/a"},
	{"raw csi", "csi.example\x9b2Jdup", "/x/a", "http://csi.example_2Jdup/x/a"},
	{"space", "sp.example dup", "/x/a", "http://sp.example_dup/x/a"},
	{"nel in target", "t.example", "/x/\u0085dup", "http://t.example/x/%C2%85dup"},
	{"line separator in target", "t.example", "/y/\u2028dup", "http://t.example/y/%E2%80%A8dup"},
	{"raw csi in absolute target", "t.example", "http://abs.example/\x9b2J", "http://abs.example/%9B2J"},
	{"unicode host kept", "bücher.example", "/x/a", "http://bücher.example/x/a"},
}

// Each forged Host gives exactly one record, its URL held to the text
// rule: the parsing half of cmd/urldedupd's TestReplayForgedHostRecords
// (which keeps the outputs' half), moved here. The request is sent as it
// was there: one segment, no handshake, over raw IPv4.
func TestForgedHostURLs(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	for _, tc := range forgedHosts {
		req := "GET " + tc.target + " HTTP/1.1\r\nHost: " + tc.host + "\r\nUser-Agent: t\r\n\r\n"
		var got []string
		e := NewEngine(nil, func(r *Request) { got = append(got, string(r.Method)+" "+string(r.URL)) })
		e.Packet(&Packet{Data: frame(t, linkRaw, tcpSeg{src: c, dst: s, seq: 100, ack: true, payload: req}), Link: layers.LinkTypeRaw})
		e.Run(context.Background(), emptySource{}) // the end of the input: flushes
		if len(got) != 1 || got[0] != "GET "+tc.want || !TextSafe([]byte(got[0])) {
			t.Errorf("%s: records %q, want [%q]", tc.name, got, "GET "+tc.want)
		}
	}
}

// emptySource is a Source at its end.
type emptySource struct{}

func (emptySource) Next(*Packet) error { return io.EOF }
func (emptySource) Drops() uint64      { return 0 }
func (emptySource) Close() error       { return nil }

// Engine.record holds every record of every protocol to the text rule,
// whatever its builder did: an h2c :method (written as sent in JSON) with
// controls is reported percent-encoded, with no allocation once the
// engine's buffer has grown.
func TestRecordTextRule(t *testing.T) {
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:8080")
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	hdrs := func(stream uint32) []byte {
		hb.Reset()
		for _, f := range [][2]string{{":method", "G\x1bET\r\n\u2028"}, {":scheme", "http"}, {":authority", "h2.example"}, {":path", "/m"}} {
			enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		return h2cFrame(0x1, 0x5, stream, hb.Bytes())
	}
	first := h2c.Preface + string(h2cFrame(0x4, 0, 0, nil)) + string(hdrs(1))
	frames := [][]byte{
		frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 100, syn: true}),
		frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 101, ack: true, payload: first}),
	}
	seq := uint32(101 + len(first))
	for i := range 50 {
		h := hdrs(uint32(3 + 2*i))
		frames = append(frames, frame(t, linkEth, tcpSeg{src: c, dst: s, seq: seq, ack: true, payload: string(h)}))
		seq += uint32(len(h))
	}
	var got []string
	e := NewEngine(nil, func(r *Request) {
		if len(got) < 2 {
			got = append(got, string(r.Method)+" "+string(r.URL))
		}
	})
	for _, f := range frames[:3] {
		e.Packet(&Packet{Data: f, Link: layers.LinkTypeEthernet})
	}
	rest := frames[3:]
	i := 0
	n := testing.AllocsPerRun(len(rest)-1, func() {
		e.Packet(&Packet{Data: rest[i], Link: layers.LinkTypeEthernet})
		i++
	})
	want := "G%1BET%0D%0A%E2%80%A8 http://h2.example/m"
	if n != 0 || len(got) != 2 || got[0] != want || got[1] != want || e.Stats().Records[ProtoH2C] != uint64(2+i) {
		t.Fatalf("%v allocations per packet; records %q (%d), want %q", n, got, e.Stats().Records[ProtoH2C], want)
	}
}
