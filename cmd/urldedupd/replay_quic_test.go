package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// quicCaptures are internal/quic's committed captures of quic-go exchanges (v1,
// v2, a ClientHello over two Initials, a Retry, a version negotiation, two
// connections from one socket); next to each, NAME.jsonl is what
// `replay --json` must print for it (made again with the captures:
// QUIC_WRITE_CAPTURES=1 in internal/quic, then this output checked by hand).
func quicCaptures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "internal", "quic", "testdata", "quicgo-*.pcap"))
	if err != nil || len(paths) < 6 {
		t.Fatalf("QUIC captures: %v %q", err, paths)
	}
	return paths
}

// Replay of each QUIC capture prints the committed records, counts them
// as quic in the summary with nothing failing authentication; a second
// replay into the same state finds them all dup; --proto without quic
// records nothing from them.
func TestReplayQUIC(t *testing.T) {
	t.Parallel()
	for _, pcap := range quicCaptures(t) {
		name := strings.TrimSuffix(filepath.Base(pcap), ".pcap")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(pcap, ".pcap") + ".jsonl")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "state")
			if out, err := exec.Command(binary, "--dir", dir, "init").CombinedOutput(); err != nil {
				t.Fatalf("init: %v %s", err, out)
			}
			out, stderr, code := run(t, nil, "--dir", dir, "replay", "--json", pcap)
			if code != 0 || out != string(want) {
				t.Fatalf("exit %d\ngot  %s\nwant %s\n%s", code, out, want, stderr)
			}
			n := uint64(strings.Count(out, "\n"))
			sum := lastJSON(t, stderr)
			if sum["records:quic"] != n || sum["new"] != n || sum["quic_hellos"] != n || sum["quic_auth_failed"] != 0 || sum["quic_malformed"] != 0 || sum["quic_hello_errors"] != 0 {
				t.Errorf("%d records, summary %v", n, sum)
			}
			out, _, code = run(t, nil, "--dir", dir, "replay", "--json", pcap)
			if code != 0 || strings.Count(out, `"new":false`) != int(n) {
				t.Errorf("second replay: exit %d, %s", code, out)
			}
			out, stderr, code = run(t, nil, "--dir", dir, "replay", "--json", "--proto", "http,tls,h2c", pcap)
			if sum := lastJSON(t, stderr); code != 0 || out != "" || sum["records:quic"] != 0 || sum["quic_datagrams"] != 0 {
				t.Errorf("--proto http,tls,h2c: exit %d, records %q, summary %v", code, out, sum)
			}
		})
	}
}

func lastJSON(t *testing.T, stderr string) map[string]uint64 {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	sum, err := flatSummary(lines[len(lines)-1])
	if err != nil {
		t.Fatalf("summary: %v\n%s", err, stderr)
	}
	return sum
}

// flatSummary reads a --json summary: counters, and objects of counters
// by group ("records": {"quic": 1}), returned as GROUP:KEY ("records:quic").
// Anything else is an error: the summary holds counters only.
func flatSummary(line string) (map[string]uint64, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		return nil, err
	}
	sum := map[string]uint64{}
	for k, v := range raw {
		var n uint64
		if err := json.Unmarshal(v, &n); err == nil {
			sum[k] = n
			continue
		}
		var group map[string]uint64
		if err := json.Unmarshal(v, &group); err != nil {
			return nil, fmt.Errorf("summary key %q: %w", k, err)
		}
		for g, n := range group {
			sum[k+":"+g] = n
		}
	}
	return sum, nil
}
