package capture

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/urldedupd/urldedupd/internal/capture/internal/capfile"
)

// A record whose captured length exceeds its original length (some writers
// make them) does not end the file (source's TestCapturedLongerThanOriginal
// checks the frames): the requests found are those of the unchanged
// capture, plain and gzip, pcap and pcapng.
func TestCapturedLongerThanOriginalRequests(t *testing.T) {
	tmp := t.TempDir()
	path := committedCaptures[0]
	_, _, files := capfile.LongerThanOriginal(t, path)
	want := countRequests(t, path)
	if want == 0 {
		t.Fatalf("%s: no requests", path)
	}
	for _, f := range files {
		plain := filepath.Join(tmp, f.Name)
		if err := os.WriteFile(plain, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(plain+".gz", capfile.Gzipped(f.Data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{plain, plain + ".gz"} {
			if n := countRequests(t, p); n != f.Copies*want {
				t.Errorf("%s: %d requests, want %d", p, n, f.Copies*want)
			}
		}
	}
}

// countRequests runs a file through an Engine and counts the requests.
func countRequests(t *testing.T, path string) int {
	t.Helper()
	src, err := OpenFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n := 0
	if err := NewEngine(nil, func(*Request) { n++ }).Run(context.Background(), src); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}
