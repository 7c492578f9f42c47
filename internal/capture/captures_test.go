package capture

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/tsharktest"
)

// The captures in testdata/captures were made from real traffic by
// scripts/make-captures.sh; http.urls lists the requests each must yield.
var committedCaptures = []string{"testdata/captures/http.pcap", "testdata/captures/http-any.pcap"}

func wantURLs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/captures/http.urls")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	sort.Strings(want)
	return want
}

func TestCommittedCaptures(t *testing.T) {
	want := wantURLs(t)
	for _, path := range committedCaptures {
		// The file as made, and as pcapng (editcap) and gzip copies.
		variants := []string{path}
		tmp := t.TempDir()
		ng := filepath.Join(tmp, filepath.Base(path)+"ng")
		if out, err := exec.Command("editcap", "-F", "pcapng", path, ng).CombinedOutput(); err != nil {
			t.Fatalf("editcap: %v %s", err, out)
		}
		gz := filepath.Join(tmp, filepath.Base(path)+".gz")
		data, _ := os.ReadFile(path)
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		os.WriteFile(gz, z.Bytes(), 0o644)
		variants = append(variants, ng, gz)
		for _, v := range variants {
			got, st, err := replay(t, v)
			sort.Strings(got)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %v\ngot  %q\nwant %q", v, err, got, want)
			}
			if st.DecodeErrors != 0 || st.Assembler.Gaps != 0 || st.Assembler.ParseErrors != 0 {
				t.Errorf("%s: stats %+v", v, st)
			}
		}
	}
}

// tshark finds the same requests (tsharktest.Requests rebuilds the URL of
// a request without Host as urldedupd does). Every committed capture, of
// the whole repository, is also checked by TestEveryCaptureAgreesWithTshark.
func TestTsharkAgrees(t *testing.T) {
	for _, path := range committedCaptures {
		fromTshark := tsharktest.Requests(t, path)
		got, _, err := replay(t, path)
		sort.Strings(got)
		if len(got) < 25 || err != nil || !reflect.DeepEqual(got, fromTshark) {
			t.Errorf("%s: urldedupd and tshark differ (%v)\nurldedupd %q\ntshark    %q", path, err, got, fromTshark)
		}
	}
}
