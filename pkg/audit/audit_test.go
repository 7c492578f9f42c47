package audit_test

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/pkg/audit"
	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/capture"
	"github.com/urldedupd/urldedupd/pkg/shardfile"
	"github.com/urldedupd/urldedupd/pkg/signature"
)

func newSet(t *testing.T) *bitcheck.Set {
	d, err := shardfile.Open(filepath.Join(t.TempDir(), "s"), &shardfile.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return bitcheck.New(d)
}

func requests() []*capture.Request {
	src, dst := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("[2001:db8::1]:80")
	ts := time.Date(2026, 11, 22, 14, 0, 0, 123456000, time.UTC)
	var rs []*capture.Request
	for _, u := range []string{"http://a.example/x", "HTTP://A.EXAMPLE:80/x", "http://b.example/\"q\"\x01\xff"} {
		rs = append(rs, &capture.Request{Time: ts, Src: src, Dst: dst, Method: []byte("GET"), URL: []byte(u)})
	}
	return rs
}

func TestFormats(t *testing.T) {
	tests := []struct {
		format audit.Format
		want   string
	}{
		{audit.NewURLs, "http://a.example/x\nhttp://b.example/\"q\"\x01\xff\n"},
		{audit.All, "new\thttp://a.example/x\ndup\tHTTP://A.EXAMPLE:80/x\nnew\thttp://b.example/\"q\"\x01\xff\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		l := audit.New(newSet(t), signature.NewSigner(signature.IEEE, signature.Safe), &out, tt.format, false)
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
	l := audit.New(newSet(t), signature.NewSigner(signature.IEEE, signature.Safe), &out, audit.JSON, false)
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
		r.TS.Nanosecond() != 123456000 {
		t.Fatalf("record %+v", r)
	}
	if recs[1].New || recs[2].URL != "http://b.example/\"q\"\x01\ufffd" {
		t.Fatalf("records %+v", recs[1:])
	}
}

func TestNoAllocations(t *testing.T) {
	var out bytes.Buffer
	out.Grow(1 << 20)
	l := audit.New(newSet(t), signature.NewSigner(signature.IEEE, signature.Safe), &out, audit.JSON, false)
	r := requests()[0]
	l.Request(r)
	if n := testing.AllocsPerRun(1000, func() { l.Request(r) }); n != 0 {
		t.Fatalf("%v allocations per request", n)
	}
}
