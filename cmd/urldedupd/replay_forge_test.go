package main_test

import (
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gopacket/gopacket/layers"
)

// forbiddenInText returns the first character of s that can start a line,
// a column or a terminal escape (a C0 control but the final LF of each
// line, DEL, a C1 control, U+2028, U+2029, a byte that is not UTF-8), and
// whether there is one.
func forbiddenInText(s string) (rune, bool) {
	for _, line := range strings.SplitAfter(s, "\n") {
		line = strings.TrimSuffix(line, "\n")
		for i, r := range line {
			if r == utf8.RuneError && !strings.HasPrefix(line[i:], "\ufffd") {
				return rune(line[i]), true
			}
			if r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x2028 || r == 0x2029 {
				return r, true
			}
		}
	}
	return 0, false
}

// HTTP/1 requests whose Host header (or target) carries bytes that would
// forge a record in the text output: a lone CR and a tab made
// "new\thttp://one.example\rdup\thttp://forged.example/x/a", read as two
// records. The requests are replayed from one capture (a connection each),
// three times: the default output and `replay --all` write exactly one line
// for each request, its URL with the Host's forbidden characters made '_'
// (as an SNI's or an h2c :authority's are) and the target's
// percent-encoded; the JSON record (the event log's format) is one line
// each holding none of them either. That each request gives that URL is
// internal/capture's TestForgedHostURLs (the same table); this test keeps
// what the outputs make of them.
func TestReplayForgedHostRecords(t *testing.T) {
	t.Parallel()
	cases := []struct {
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
	var frames [][]byte
	var want, wantAll strings.Builder
	for i, c := range cases {
		req := "GET " + c.target + " HTTP/1.1\r\nHost: " + c.host + "\r\nUser-Agent: t\r\n\r\n"
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
		frames = append(frames, serializeTCP(t, ip, uint16(40000+i), req))
		want.WriteString(c.want + "\n")
		wantAll.WriteString("dup\t" + c.want + "\n")
	}
	pcap := filepath.Join(t.TempDir(), "forge.pcap")
	writePcap(t, pcap, layers.LinkTypeRaw, frames)
	dir := t.TempDir()

	out, stderr, code := run(t, nil, "--dir", dir, "replay", pcap) // creates the state
	if r, bad := forbiddenInText(out); code != 0 || bad || out != want.String() {
		t.Fatalf("replay: exit %d, output %q (forbidden %q), want %q\n%s", code, out, r, want.String(), stderr)
	}
	out, stderr, code = run(t, nil, "--dir", dir, "replay", "--dry-run", "--all", pcap)
	if code != 0 || out != wantAll.String() {
		t.Fatalf("replay --all: exit %d, output %q, want %q\n%s", code, out, wantAll.String(), stderr)
	}
	out, stderr, code = run(t, nil, "--dir", dir, "replay", "--dry-run", "--json", pcap)
	lines := strings.SplitAfter(strings.TrimSuffix(out, "\n"), "\n")
	if r, bad := forbiddenInText(out); code != 0 || bad || len(lines) != len(cases) {
		t.Fatalf("replay --json: exit %d, %d lines (forbidden %q): %q\n%s", code, len(lines), r, out, stderr)
	}
	for i, c := range cases {
		var rec struct{ URL string }
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil || rec.URL != c.want {
			t.Errorf("%s: replay --json: %v, url %q, want %q", c.name, err, rec.URL, c.want)
		}
	}
}
