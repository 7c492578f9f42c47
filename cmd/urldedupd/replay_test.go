package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const capturePath = "../../internal/capture/testdata/captures/http.pcap"

func expectedURLs(t *testing.T) []string {
	b, err := os.ReadFile("../../internal/capture/testdata/captures/http.urls")
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		urls = append(urls, strings.SplitN(l, " ", 2)[1])
	}
	sort.Strings(urls)
	return urls
}

func TestReplay(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	want := expectedURLs(t)
	out, stderr, code := run(t, nil, "--dir", dir, "replay", capturePath)
	got := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(got)
	if code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("first replay: exit %d\n%s\nstderr %s", code, out, stderr)
	}
	if !strings.Contains(stderr, "requests 25  new 25  dup 0  parse errors 0  reassembly gaps 0  kernel drops 0") {
		t.Fatalf("summary: %q", stderr)
	}
	out, stderr, code = run(t, nil, "--dir", dir, "replay", capturePath)
	if code != 0 || out != "" || !strings.Contains(stderr, "new 0  dup 25") {
		t.Fatalf("second replay: exit %d, %q, %q", code, out, stderr)
	}

	jsonl := filepath.Join(t.TempDir(), "audit.jsonl")
	if _, stderr, code := run(t, nil, "--dir", dir, "replay", "--json", "-o", jsonl, capturePath); code != 0 {
		t.Fatalf("--json: %d %s", code, stderr)
	}
	data, _ := os.ReadFile(jsonl)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 25 {
		t.Fatalf("--json wrote %d lines", len(lines))
	}
	for _, l := range lines {
		var r struct {
			TS, Src, Dst, Method, URL string
			New                       *bool
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.TS == "" || r.Src == "" || r.Dst == "" ||
			r.Method == "" || !strings.HasPrefix(r.URL, "http://") || r.New == nil || *r.New {
			t.Fatalf("record %q: %+v %v", l, r, err)
		}
	}
	if _, stderr, code := run(t, nil, "--dir", dir, "replay", "--all", "--json", capturePath); code != 2 {
		t.Fatalf("--all --json: %d %s", code, stderr)
	}
}

// A truncated capture: everything before the damage is reported and
// recorded, then the run fails naming the file and packet.
func TestReplayTruncated(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	data, err := os.ReadFile(capturePath)
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(t.TempDir(), "trunc.pcap")
	os.WriteFile(trunc, data[:len(data)*2/3], 0o644)
	out, stderr, code := run(t, nil, "--dir", dir, "replay", "--all", trunc)
	if code == 0 || !strings.Contains(stderr, "trunc.pcap: packet ") || !strings.Contains(stderr, "capture file truncated") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	printed := strings.Split(strings.TrimSpace(out), "\n")
	if len(printed) < 5 {
		t.Fatalf("only %d requests reported before the damage", len(printed))
	}
	for _, l := range printed {
		u := strings.TrimPrefix(l, "new\t")
		if c, _, _ := run(t, nil, "--dir", dir, "check", u); !strings.HasPrefix(c, "dup\t") {
			t.Fatalf("%q reported but not recorded: %q", u, c)
		}
	}
}
