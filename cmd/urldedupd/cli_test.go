package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommands(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	in := "http://a.example/x\nHTTP://A.example:80/x\n\nhttp://b.example/\n" + strings.Repeat("y", 70000) + "\nhttp://a.example/x#frag\n"
	urls := filepath.Join(t.TempDir(), "urls.txt")
	os.WriteFile(urls, []byte(in), 0o644)

	if out, _, code := run(t, nil, "--dir", dir, "init", "--normalize", "safe"); code != 0 || !strings.HasPrefix(out, "created ") {
		t.Fatalf("init: %d %q", code, out)
	}
	if out, _, code := run(t, nil, "--dir", dir, "init"); code != 0 || !strings.HasPrefix(out, "exists ") {
		t.Fatalf("init again: %d %q", code, out)
	}
	if _, stderr, code := run(t, nil, "--dir", dir, "init", "--normalize", "none"); code != 3 || !strings.Contains(stderr, "differs") {
		t.Fatalf("init with other settings: %d %q", code, stderr)
	}
	out, stderr, code := run(t, nil, "--dir", dir, "filter", "--dry-run", "--mark", urls)
	if code != 0 || out != "new\thttp://a.example/x\nnew\tHTTP://A.example:80/x\nnew\thttp://b.example/\nnew\thttp://a.example/x#frag\n" {
		t.Fatalf("dry run: %d %q %q", code, out, stderr)
	}
	out, stderr, code = run(t, nil, "--dir", dir, "filter", "-v", urls)
	if code != 0 || out != "http://a.example/x\nhttp://b.example/\n" {
		t.Fatalf("filter: %d %q", code, out)
	}
	for _, want := range []string{urls + ":5: line longer than 65536 bytes, skipped", "lines 6  new 2  dup 2  skipped 2 (empty 1, too long 1)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("filter stderr %q lacks %q", stderr, want)
		}
	}
	out, _, _ = run(t, strings.NewReader("http://c.example/\nhttp://b.example/\n"), "--dir", dir, "filter", "--dups")
	if out != "http://b.example/\n" {
		t.Fatalf("--dups: %q", out)
	}
	out, _, _ = run(t, nil, "--dir", dir, "check", "http://a.example/x", "http://never.example/")
	if out != "dup\thttp://a.example/x\nnew\thttp://never.example/\n" {
		t.Fatalf("check: %q", out)
	}
	out, _, code = run(t, nil, "--dir", dir, "stats", "--json")
	var st struct {
		BitsSet  uint64   `json:"bits_set"`
		Estimate *float64 `json:"estimated_distinct"`
		Shards   []uint64 `json:"shards"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 {
		t.Fatalf("stats --json: %v %q", err, out)
	}
	if st.BitsSet != 3 || len(st.Shards) != 256 || st.Estimate == nil || *st.Estimate < 2.99 || *st.Estimate > 3.01 {
		t.Fatalf("stats: %+v", st)
	}
	out, _, _ = run(t, nil, "--dir", dir, "stats")
	for _, want := range []string{"bits set    3 of 4,294,967,296", "distinct    ~3 URLs", "false dup", "\nf "} {
		if !strings.Contains(out, want) {
			t.Errorf("stats output lacks %q:\n%s", want, out)
		}
	}
	if _, stderr, code := run(t, nil, "--dir", dir, "filter", "--dups", "--mark"); code != 2 || stderr == "" {
		t.Fatalf("--dups --mark: %d %q", code, stderr)
	}
	if _, _, code := run(t, nil, "--dir", dir, "check"); code != 2 {
		t.Fatalf("check without URLs: %d", code)
	}
	if _, stderr, code := run(t, nil, "--dir", filepath.Join(t.TempDir(), "none"), "stats"); code != 3 || !strings.Contains(stderr, "no urldedupd state") {
		t.Fatalf("stats without state: %d %q", code, stderr)
	}
	for _, cmd := range []string{"init", "filter", "check", "stats"} {
		if out, _, code := run(t, nil, cmd, "--help"); code != 0 || !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help: %d %q", cmd, code, out)
		}
	}
	if out, _, code := run(t, nil, "--version"); code != 0 || !strings.Contains(out, "urldedupd version") {
		t.Errorf("--version: %d %q", code, out)
	}
}
