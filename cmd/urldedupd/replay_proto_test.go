package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --proto selects what is recorded; the summaries count records by
// protocol; an unknown name is a usage error.
func TestReplayProto(t *testing.T) {
	t.Parallel()
	pcap := filepath.Join("..", "..", "internal", "capture", "testdata", "captures", "http.pcap")
	dir := filepath.Join(t.TempDir(), "state")
	out, _, code := run(t, nil, "--dir", dir, "replay", "--proto", "tls,quic", pcap)
	if code != 0 || out != "" {
		t.Fatalf("--proto tls,quic on an HTTP capture: exit %d, records %q", code, out)
	}
	out, js, code := run(t, nil, "--dir", dir, "replay", "--dry-run", "--json", "--proto", "http", pcap)
	lines := strings.Split(strings.TrimSpace(js), "\n")
	sum, err := flatSummary(lines[len(lines)-1])
	if code != 0 || err != nil {
		t.Fatalf("exit %d, summary %v\n%s", code, err, js)
	}
	n := uint64(strings.Count(out, "\n"))
	if n == 0 || sum["records:http"] != n || sum["requests"] != n || sum["records:tls"] != 0 {
		t.Fatalf("%d records, summary %v", n, sum)
	}
	for _, k := range []string{"records:quic", "records:h2c", "tls_hellos_without_sni", "tls_ech_hellos"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary has no %q: %v", k, sum)
		}
	}
	_, stderr, code := run(t, nil, "--dir", dir, "replay", "--proto", "http,ftp", "-o", os.DevNull, pcap)
	if code != 2 || !strings.Contains(stderr, `unknown protocol "ftp"`) {
		t.Fatalf("--proto http,ftp: exit %d, %s", code, stderr)
	}
}
