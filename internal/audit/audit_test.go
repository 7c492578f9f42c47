package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/audit"
	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/statetest"
	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// newSet makes a new local state, in memory: it answers at once.
func newSet(t *testing.T) *state.State {
	return statetest.Bitmap(t)
}

func requests() []*capture.Request {
	src, dst := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("[2001:db8::1]:80")
	ts := time.Date(2026, 11, 22, 14, 0, 0, 123456000, time.UTC)
	var rs []*capture.Request
	for _, u := range []string{"http://a.example/x", "HTTP://A.EXAMPLE:80/x", "http://b.example/\"q\"\x01\xff"} {
		rs = append(rs, &capture.Request{Time: ts, Src: src, Dst: dst, Method: []byte("GET"), URL: []byte(u)})
	}
	rs[2].Encap = capture.NewEncap(capture.EncapVLAN, capture.EncapPPPoE)
	return rs
}

// The text formats; a URL's control and non-UTF-8 bytes are written
// percent-encoded (capture's text rule), never raw.
func TestFormats(t *testing.T) {
	tests := []struct {
		format audit.Format
		want   string
	}{
		{audit.NewURLs, "http://a.example/x\nhttp://b.example/\"q\"%01%FF\n"},
		{audit.All, "new\thttp://a.example/x\ndup\tHTTP://A.EXAMPLE:80/x\nnew\thttp://b.example/\"q\"%01%FF\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		l := audit.New(newSet(t), signature.NewSigner(signature.IEEE, signature.Safe), &out, tt.format, false, nil)
		for _, r := range requests() {
			l.Request(r)
		}
		if out.String() != tt.want || l.Counts != (audit.Counts{Requests: 3, New: 2, Dup: 1, Invalid: 0}) {
			t.Errorf("format %d: %q, %+v", tt.format, out.String(), l.Counts)
		}
	}
}

func TestJSON(t *testing.T) {
	var out bytes.Buffer
	l := audit.New(newSet(t), signature.NewSigner(signature.IEEE, signature.Safe), &out, audit.JSON, false, nil)
	for _, r := range requests() {
		l.Request(r)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	type record struct {
		TS     time.Time `json:"ts"`
		Src    string    `json:"src"`
		Dst    string    `json:"dst"`
		Method string    `json:"method"`
		URL    string    `json:"url"`
		Encap  *string   `json:"encap"`
		New    bool      `json:"new"`
	}
	var recs []record
	for _, line := range lines {
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		recs = append(recs, r)
	}
	if r := recs[0]; r.Src != "192.0.2.10:40000" || r.Dst != "[2001:db8::1]:80" || r.Method != "GET" || !r.New ||
		r.TS.Nanosecond() != 123456000 || r.Encap != nil {
		t.Fatalf("record %+v", r)
	}
	if recs[1].New || recs[2].URL != "http://b.example/\"q\"\x01\ufffd" || recs[2].Encap == nil || *recs[2].Encap != "vlan/pppoe" {
		t.Fatalf("records %+v", recs[1:])
	}
}

// A CONNECT is marked a tunnel: a third column in All, "tunnel":true in
// JSON; the other records do not change.
func TestTunnel(t *testing.T) {
	rs := requests()[:1]
	rs = append(rs, &capture.Request{Time: rs[0].Time, Src: rs[0].Src, Dst: rs[0].Dst, Method: []byte("CONNECT"),
		URL: []byte("a.example:443"), Tunnel: true})
	tests := []struct {
		format audit.Format
		want   string
	}{
		{audit.NewURLs, "http://a.example/x\na.example:443\n"},
		{audit.All, "new\thttp://a.example/x\nnew\ta.example:443\ttunnel\n"},
		{audit.JSON, `{"ts":"2026-11-22T14:00:00.123456Z","src":"192.0.2.10:40000","dst":"[2001:db8::1]:80","method":"GET","url":"http://a.example/x","community_id":"1:Udr27jcsSXZzpSPKrZASj5YhRa0=","new":true}` + "\n" +
			`{"ts":"2026-11-22T14:00:00.123456Z","src":"192.0.2.10:40000","dst":"[2001:db8::1]:80","method":"CONNECT","url":"a.example:443","community_id":"1:Udr27jcsSXZzpSPKrZASj5YhRa0=","tunnel":true,"new":true}` + "\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		l := audit.New(newSet(t), signature.NewSigner(signature.IEEE, signature.Safe), &out, tt.format, false, nil)
		for _, r := range rs {
			l.Request(r)
		}
		if out.String() != tt.want {
			t.Errorf("format %d:\n%s\nwant\n%s", tt.format, out.String(), tt.want)
		}
	}
}

func TestNoAllocations(t *testing.T) {
	ua := *requests()[0]
	ua.UserAgent = []byte("curl/8.0")
	tls := ua
	tls.Proto, tls.URL, tls.JA4, tls.Hello = capture.ProtoTLS, []byte("https://[2001:db8::1]:8443/p?q"), []byte("t13d1516h2_8daaf6152771_e5627efa2ab1"), hellos[1]
	for _, format := range []audit.Format{audit.JSON, audit.ECS} {
		var out bytes.Buffer
		out.Grow(1 << 20)
		set := newSet(t)
		l := audit.New(set, signature.NewSigner(signature.IEEE, signature.Safe), &out, format, false, nil)
		for _, r := range []*capture.Request{requests()[0], requests()[2], &ua, &tls} { // plain, with an encapsulation, a User-Agent, a ClientHello
			l.Request(r)
			if n := testing.AllocsPerRun(1000, func() { out.Reset(); l.Request(r) }); n != 0 {
				t.Fatalf("format %d: %v allocations per request (%s)", format, n, r.URL)
			}
		}
	}
}

// remote is a real local state asked in batches, inFlight of them in
// flight (3 when zero), so that a Log batches as it does for Redis; it
// fails a batch holding signature fail.
type remote struct {
	set      *state.State
	fail     signature.Signature
	inFlight int
}

func (r *remote) InFlight() int {
	if r.inFlight == 0 {
		return 3
	}
	return r.inFlight
}

var errDown = errors.New("backend down")

func (r *remote) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	for _, s := range sigs {
		if r.fail != 0 && s == r.fail {
			return errDown
		}
	}
	return r.set.Decide(ctx, sigs, seen, dryRun)
}

// hellos are ClientHellos real clients sent (internal/tlshello's test data).
var hellos = func() []tlshello.Hello {
	var hs []tlshello.Hello
	for _, name := range []string{"go-default", "go-ech", "openssl-nosni", "openssl-tls12-alpn"} {
		msg, err := os.ReadFile(filepath.Join("..", "tlshello", "testdata", name+".hello"))
		if err != nil {
			panic(err)
		}
		var h tlshello.Hello
		if err := tlshello.Parse(msg, &h); err != nil {
			panic(err)
		}
		hs = append(hs, h)
	}
	return hs
}()

// A record of a ClientHello: "proto", no method, the hello's fields; an
// HTTP record keeps its fields and has none of these.
func TestHelloJSON(t *testing.T) {
	var out bytes.Buffer
	l := audit.New(newSet(t), signature.NewSigner(signature.IEEE, signature.Safe), &out, audit.JSON, false, nil)
	base := requests()[0]
	tls := *base
	tls.Proto, tls.Method, tls.URL = capture.ProtoTLS, nil, []byte("https://public.example/")
	tls.Hello = hellos[1] // go-ech
	tls.JA4 = []byte("t13d1516h2_8daaf6152771_e5627efa2ab1")
	grease := tls
	grease.Proto, grease.URL = capture.ProtoQUIC, []byte("https://[2001:db8::1]:8443/")
	grease.Hello = tlshello.Hello{ALPN: []byte("\x02h3"), Versions: []byte{0x0a, 0x0a, 0x03, 0x04, 0x7f, 0x1c}}
	grease.JA4 = nil
	for _, r := range []*capture.Request{base, &tls, &grease} {
		l.Request(r)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines: %q", len(lines), out.String())
	}
	var recs []map[string]any
	for _, line := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		recs = append(recs, r)
	}
	for _, k := range []string{"proto", "sni", "alpn", "versions", "ech", "ja4", "user_agent"} {
		if _, ok := recs[0][k]; ok {
			t.Errorf("HTTP record has %q: %s", k, lines[0])
		}
	}
	if recs[0]["method"] != "GET" {
		t.Errorf("HTTP record: %s", lines[0])
	}
	want := []string{
		`"dst":"[2001:db8::1]:80","proto":"tls","url":"https://public.example/","sni":"public.example","alpn":["http/1.1"],"versions":["TLS 1.3"],"ech":true,"ja4":"t13d1516h2_8daaf6152771_e5627efa2ab1","community_id":"1:Udr27jcsSXZzpSPKrZASj5YhRa0=","new":true}`,
		`"proto":"quic","url":"https://[2001:db8::1]:8443/","alpn":["h3"],"versions":["TLS 1.3","0x7f1c"],"community_id":"1:jAZYn6VlyDV9hMZQhPIXlw598ks=","new":true}`,
	}
	for i, w := range want {
		if !strings.HasSuffix(lines[i+1], w) {
			t.Errorf("record %s\nwant it to end %s", lines[i+1], w)
		}
		if _, ok := recs[i+1]["method"]; ok {
			t.Errorf("a ClientHello record has a method: %s", lines[i+1])
		}
	}
}

func manyRequests(n int) []*capture.Request {
	var rs []*capture.Request
	base := requests()[0]
	for i := range n {
		r := *base
		r.Time = base.Time.Add(time.Duration(i) * time.Millisecond)
		r.URL = fmt.Appendf(nil, "http://h%d.example/%d", i%7, i%(n/3+1))
		if i%10 == 3 { // a CONNECT: the tunnel mark goes through the batches too
			r.Method, r.URL, r.Tunnel = []byte("CONNECT"), fmt.Appendf(nil, "h%d.example:443", i%11), true
		}
		if i%3 == 0 {
			r.Encap = capture.NewEncap(capture.EncapMPLS, capture.EncapEthernet)
		}
		if i%10 == 5 { // a ClientHello: its fields go through the batches too
			r.Proto, r.Method, r.URL = capture.ProtoTLS+capture.Proto(i%20/10)%2, nil, fmt.Appendf(nil, "https://h%d.example/", i%13)
			r.Hello = hellos[i%len(hellos)]
		}
		rs = append(rs, &r)
	}
	return rs
}

// Batched through a remote Decider, the records are those of the local
// path, in the same order.
func TestRemoteSameRecords(t *testing.T) {
	rs := manyRequests(5000)
	for _, format := range []audit.Format{audit.NewURLs, audit.All, audit.JSON, audit.NewJSON} {
		var local, batched bytes.Buffer
		signer := signature.NewSigner(signature.IEEE, signature.Safe)
		l := audit.New(newSet(t), signer, &local, format, false, nil)
		b := audit.New(&remote{set: newSet(t)}, signer, &batched, format, false, &audit.Options{Batch: 64})
		for i, r := range rs {
			l.Request(r)
			b.Request(r)
			if i == 2500 {
				b.Flush() // as on an idle capture
			}
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(local.String(), `,"encap":"mpls/ethernet",`); format == audit.JSON && n != (len(rs)+2)/3 {
			t.Fatalf("%d JSON records with their encapsulation, want %d", n, (len(rs)+2)/3)
		}
		if batched.String() != local.String() || b.Counts != l.Counts {
			t.Fatalf("format %d: batched records differ (%d bytes, %+v) from local (%d bytes, %+v)",
				format, batched.Len(), b.Counts, local.Len(), l.Counts)
		}
	}
}

// A batch the backend fails stops the log: OnError is told, and no record
// of that batch or after it is written.
func TestRemoteFailure(t *testing.T) {
	rs := manyRequests(1000)
	signer := signature.NewSigner(signature.IEEE, signature.Safe)
	fail, _ := signer.Sign(rs[250].URL) // first seen in the third batch
	var out bytes.Buffer
	var told error
	l := audit.New(&remote{set: newSet(t), fail: fail, inFlight: 2}, signer, &out, audit.All, false,
		&audit.Options{Batch: 100})
	l.OnError = func(err error) { told = err }
	for _, r := range rs {
		l.Request(r)
	}
	err := l.Close()
	if !errors.Is(err, errDown) || !errors.Is(told, errDown) {
		t.Fatalf("Close: %v; OnError: %v", err, told)
	}
	if n := strings.Count(out.String(), "\n"); n != 200 {
		t.Fatalf("%d records written; want the 200 of the two batches decided", n)
	}
}

func TestRemoteNoAllocations(t *testing.T) {
	var out bytes.Buffer
	out.Grow(8 << 20)
	l := audit.New(&remote{set: newSet(t), inFlight: 2}, signature.NewSigner(signature.IEEE, signature.Safe), &out, audit.JSON, false,
		&audit.Options{Batch: 100})
	defer l.Close()
	rs := manyRequests(300)
	run := func() {
		for _, r := range rs {
			l.Request(r)
		}
		l.Flush()
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Fatalf("%v allocations per 300 requests", n)
	}
}

const httpCapture = "../capture/testdata/captures/http"

// wantURLs are the request URLs of the capture, as its .urls file (made
// with tshark) lists them, sorted.
func wantURLs(t *testing.T) []string {
	b, err := os.ReadFile(httpCapture + ".urls")
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		_, u, _ := strings.Cut(line, " ")
		urls = append(urls, u)
	}
	slices.Sort(urls)
	return urls
}

// pauseAtEnd is a file source that, at its end, first reports no frame
// for the moment (as an idle live source does) and calls idle, then ends.
type pauseAtEnd struct {
	*capture.FileSource
	paused bool
	idle   func()
}

func (p *pauseAtEnd) Next(pkt *capture.Packet) error {
	err := p.FileSource.Next(pkt)
	if errors.Is(err, io.EOF) && !p.paused {
		p.paused = true
		p.idle()
		return capture.ErrNoPacket
	}
	return err
}

// A pipeline finds every request of a capture and records it; run again on
// the same state, every one is a duplicate. Deciding in batches, what was
// queued is written when the source pauses, before it ends.
func TestPipeline(t *testing.T) {
	want := wantURLs(t)
	st := newSet(t)
	signer := signature.NewSigner(signature.IEEE, signature.Safe)
	for i, d := range []*remote{{set: st, inFlight: 2}, {set: st, inFlight: 2}} {
		var out bytes.Buffer
		log := audit.New(d, signer, &out, audit.All, false, &audit.Options{Batch: 1000, MaxDelay: time.Hour})
		flushes := 0
		pipe := audit.NewPipeline(nil, log, func() error { flushes++; return nil })
		src, err := capture.OpenFiles(httpCapture + ".pcap")
		if err != nil {
			t.Fatal(err)
		}
		var atPause string
		paused := &pauseAtEnd{FileSource: src, idle: func() { atPause = out.String() }}
		if err := pipe.Run(context.Background(), paused); err != nil {
			t.Fatal(err)
		}
		src.Close()
		if atPause != "" || flushes != 1 {
			t.Fatalf("run %d: %q written before the pause, %d flushes at it; want nothing (one batch queued), then one flush", i, atPause, flushes)
		}
		written := out.String()
		if err := log.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != written {
			t.Fatalf("run %d: records written at Close, not at the pause", i)
		}
		var got []string
		verdicts := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(written), "\n") {
			v, u, _ := strings.Cut(line, "\t")
			got = append(got, u)
			verdicts[v]++
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("run %d: URLs\n%q\nwant (tshark)\n%q", i, got, want)
		}
		if i == 1 && verdicts["dup"] != len(want) {
			t.Fatalf("second run: %v, want every one dup", verdicts)
		}
		if i == 0 && verdicts["new"] == 0 {
			t.Fatalf("first run: %v, want new URLs", verdicts)
		}
	}
}

// An HTTP record carries its User-Agent, escaped as every field is; the
// same flow's records carry one community_id, both ways, and batching
// (a remote state's path) keeps each record's own fields.
func TestUserAgentAndCommunityID(t *testing.T) {
	var out bytes.Buffer
	l := audit.New(newSet(t), signature.NewSigner(signature.IEEE, signature.Safe), &out, audit.JSON, false, &audit.Options{Batch: 3, MaxDelay: time.Hour})
	a := *requests()[0]
	a.UserAgent = []byte("curl/7.88.1 \"x\"\x01")
	b := a
	b.URL, b.UserAgent = []byte("http://a.example/other"), nil
	b.Src, b.Dst = a.Dst, a.Src // the same flow, the other way
	for _, r := range []*capture.Request{&a, &b} {
		l.Request(r)
	}
	l.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%q", out.String())
	}
	var recs [2]map[string]any
	for i, line := range lines {
		if err := json.Unmarshal([]byte(line), &recs[i]); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
	}
	if recs[0]["user_agent"] != "curl/7.88.1 \"x\"\x01" || !strings.Contains(lines[0], `"user_agent":"curl/7.88.1 \"x\"\u0001"`) {
		t.Errorf("user_agent: %s", lines[0])
	}
	if _, ok := recs[1]["user_agent"]; ok {
		t.Errorf("a record without a User-Agent has one: %s", lines[1])
	}
	if recs[0]["community_id"] != recs[1]["community_id"] || recs[0]["community_id"] != "1:Udr27jcsSXZzpSPKrZASj5YhRa0=" {
		t.Errorf("community_id %v and %v", recs[0]["community_id"], recs[1]["community_id"])
	}
}
