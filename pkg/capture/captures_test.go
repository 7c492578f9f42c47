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

// tshark finds the same requests. The one justified difference: for an
// HTTP/1.0 request without a Host header tshark leaves full_uri empty,
// while urldedupd falls back to the server's address; for those rows the
// URL is rebuilt here from tshark's own ip.dst, tcp.dstport and uri.
func TestTsharkAgrees(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatal("tshark is needed (make test installs it): ", err)
	}
	for _, path := range committedCaptures {
		out, err := exec.Command("tshark", "-n", "-r", path, "-Y", "http.request", "-T", "fields",
			"-E", "aggregator=/s", "-e", "http.request.method", "-e", "http.request.full_uri",
			"-e", "http.request.uri", "-e", "ip.dst", "-e", "ipv6.dst", "-e", "tcp.dstport").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		var fromTshark []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(line, "\t")
			methods, uris, paths := strings.Fields(f[0]), strings.Fields(f[1]), strings.Fields(f[2])
			for i, m := range methods {
				if len(uris) == len(methods) {
					fromTshark = append(fromTshark, m+" "+uris[i])
					continue
				}
				host := f[3] + f[4]
				if strings.Contains(host, ":") {
					host = "[" + host + "]"
				}
				fromTshark = append(fromTshark, m+" http://"+host+":"+f[5]+paths[i])
			}
		}
		sort.Strings(fromTshark)
		got, _, err := replay(t, path)
		sort.Strings(got)
		if len(got) < 25 || err != nil || !reflect.DeepEqual(got, fromTshark) {
			t.Errorf("%s: urldedupd and tshark differ (%v)\nurldedupd %q\ntshark    %q", path, err, got, fromTshark)
		}
	}
}
