package main_test

import (
	be "encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// fragments6 serializes an IPv6 TCP segment carrying payload and splits it
// into fragments of at most size payload bytes (a multiple of 8), each
// with a fragment header.
func fragments6(t *testing.T, srcPort uint16, id uint32, payload string, size int) [][]byte {
	t.Helper()
	pkt := serializeTCP(t, &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP,
		SrcIP: net.ParseIP("fd00::1"), DstIP: net.ParseIP("fd00::2")}, srcPort, payload)
	body := pkt[40:]
	var out [][]byte
	for off := 0; off < len(body); off += size {
		chunk := body[off:min(off+size, len(body))]
		f := append(append(append([]byte(nil), pkt[:40]...), make([]byte, 8)...), chunk...)
		f[6] = 44 // a fragment header follows
		be.BigEndian.PutUint16(f[4:], uint16(8+len(chunk)))
		f[40] = byte(layers.IPProtocolTCP)
		fo := uint16(off)
		if off+size < len(body) {
			fo |= 1 // more fragments
		}
		be.BigEndian.PutUint16(f[42:], fo)
		be.BigEndian.PutUint32(f[44:], id)
		out = append(out, f)
	}
	return out
}

// replaySummary replays args with --json and returns the URLs reported and
// the summary.
func replaySummary(t *testing.T, args ...string) ([]string, map[string]uint64) {
	t.Helper()
	args = append([]string{"--dir", filepath.Join(t.TempDir(), "state"), "replay", "--json"}, args...)
	stdout, stderr, code := run(t, nil, args...)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	sum, err := flatSummary(lines[len(lines)-1])
	if code != 0 || err != nil {
		t.Fatalf("%v: exit %d (%v)\n%s", args, code, err, stderr)
	}
	var urls []string
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r struct{ URL string }
		if l != "" && json.Unmarshal([]byte(l), &r) == nil {
			urls = append(urls, r.URL)
		}
	}
	return urls, sum
}

// --max-frag-datagrams and --max-frag-buffer-mb: twenty requests of about
// 60 KB in IPv4 fragments, the last fragment of each first (so that each
// datagram's buffer is its whole length from the start), then the rest.
// With the defaults all twenty are found and nothing is dropped; with 10
// datagrams, or 1 MiB of buffers (17 of them), the oldest are dropped at the
// cap, counted, and their requests lost.
func TestReplayFragmentCaps(t *testing.T) {
	t.Parallel()
	const n = 20
	var lasts, rests [][]byte
	for i := range n {
		req := fmt.Sprintf("GET /big/%d HTTP/1.1\r\nHost: frag.example\r\nX-Pad: %s\r\n\r\n", i, strings.Repeat("p", 60000))
		fs := fragments4(t, uint16(40000+i), uint16(i+1), req, 1480)
		lasts = append(lasts, fs[len(fs)-1])
		rests = append(rests, fs[:len(fs)-1]...)
	}
	path := filepath.Join(t.TempDir(), "big.pcap")
	writePcap(t, path, layers.LinkTypeRaw, append(lasts, rests...))
	for _, tt := range []struct {
		args    []string
		dropped bool
	}{
		{nil, false},
		{[]string{"--max-frag-datagrams", "10"}, true},
		{[]string{"--max-frag-buffer-mb", "1"}, true},
	} {
		t.Run(strings.Join(append([]string{"defaults"}, tt.args...), " "), func(t *testing.T) {
			urls, sum := replaySummary(t, append(tt.args, path)...)
			if dropped := sum["ip_datagrams_dropped_at_cap"] > 0; dropped != tt.dropped ||
				len(urls) != int(sum["ip_datagrams_reassembled"]) || tt.dropped == (len(urls) == n) {
				t.Fatalf("%d URLs, summary %v", len(urls), sum)
			}
		})
	}
}

// --frag-timeout-v4 and --frag-timeout-v6: a request in IPv4 fragments and
// one in IPv6 fragments, each with 45 s of packet time between its first
// fragment and the rest. By default (30 s, 60 s) the IPv4 one times out and
// the IPv6 one is found; each flag moves its own family across.
func TestReplayFragmentTimeouts(t *testing.T) {
	t.Parallel()
	req := "GET /slow HTTP/1.1\r\nHost: %s\r\nX-Pad: " + strings.Repeat("s", 2000) + "\r\n\r\n"
	f4 := fragments4(t, 40000, 7, fmt.Sprintf(req, "v4.example"), 512)
	f6 := fragments6(t, 40001, 7, fmt.Sprintf(req, "v6.example"), 512)
	t0 := time.Unix(1_700_000_000, 0)
	var frames [][]byte
	var at []time.Time
	add := func(fs [][]byte, start time.Time) {
		for i, f := range fs {
			frames = append(frames, f)
			at = append(at, start.Add(time.Duration(i)*time.Millisecond))
		}
	}
	add(f4[:1], t0)
	add(f6[:1], t0.Add(time.Millisecond))
	add(f4[1:], t0.Add(45*time.Second))
	add(f6[1:], t0.Add(46*time.Second))
	path := filepath.Join(t.TempDir(), "slow.pcap")
	writePcapAt(t, path, layers.LinkTypeRaw, frames, at)
	for _, tt := range []struct {
		args     []string
		want     string // the hosts found
		timeouts uint64
	}{
		{nil, "v6.example", 1},
		{[]string{"--frag-timeout-v4", "1m"}, "v4.example v6.example", 0},
		{[]string{"--frag-timeout-v6", "10s"}, "", 2},
		{[]string{"--frag-timeout-v4", "50s", "--frag-timeout-v6", "40s"}, "v4.example", 1},
	} {
		t.Run(strings.Join(append([]string{"defaults"}, tt.args...), " "), func(t *testing.T) {
			urls, sum := replaySummary(t, append(tt.args, path)...)
			var hosts []string
			for _, u := range urls {
				hosts = append(hosts, strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/slow"))
			}
			if strings.Join(hosts, " ") != tt.want || sum["ip_datagrams_timed_out"] != tt.timeouts {
				t.Fatalf("URLs %q, summary %v", urls, sum)
			}
		})
	}
}

// The fragment caps come from serve's config file like every flag, and a
// bad value there is a usage error too.
func TestServeFragmentFlagsConfig(t *testing.T) {
	t.Parallel()
	for _, line := range []string{"max-frag-datagrams = 0", "max-frag-buffer-mb = 4096", "frag-timeout-v4 = 0s", "frag-timeout-v6 = 3h"} {
		t.Run(line, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "urldedupd.conf")
			if err := os.WriteFile(cfg, []byte(line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "state")
			name, _, _ := strings.Cut(line, " ")
			_, stderr, code := run(t, nil, "--dir", dir, "serve", "--socket", "none", "--config", cfg)
			if code != 2 || !strings.Contains(stderr, "--"+name) {
				t.Fatalf("exit %d, want 2 naming --%s: %s", code, name, stderr)
			}
		})
	}
}
