package main_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// writeFlows writes, streaming, a pcap of n connections from distinct
// clients to 192.0.2.1:80, each a SYN and then one segment of payload(i),
// 5 µs apart (so that none idles out while the others arrive).
func writeFlows(t *testing.T, path string, n int, payload func(i int) string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 4<<20)
	w := pcapgo.NewWriter(bw)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1_790_000_000, 0)
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, EthernetType: layers.EthernetTypeIPv4}
	for i := range n {
		client := net.IP{198, 51, byte(i >> 8), byte(i)}
		for _, syn := range []bool{true, false} {
			ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: client, DstIP: net.IP{192, 0, 2, 1}}
			tcp := &layers.TCP{SrcPort: layers.TCPPort(10000 + i>>16), DstPort: 80, Seq: 1000, SYN: syn, ACK: !syn, Window: 65535}
			var p gopacket.Payload
			if !syn {
				tcp.Seq, p = 1001, gopacket.Payload(payload(i))
			}
			tcp.SetNetworkLayerForChecksum(ip)
			if err := gopacket.SerializeLayers(buf, opts, eth, ip, tcp, p); err != nil {
				t.Fatal(err)
			}
			ts = ts.Add(5 * time.Microsecond)
			if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}, buf.Bytes()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
}

// replay of adversarial captures stays within the mapped state (512 MiB)
// plus 256 MiB of peak RSS, and counts what its caps dropped: 100,000
// connections each holding a 16,000-byte request line whose headers never
// end (once 1.69 GB, nothing counted), and 100,000 each holding a 16 KB
// Host header.
func TestReplayMemoryCaps(t *testing.T) {
	t.Parallel()
	const flows = 100000
	const limitKiB = (512 + 256) << 10
	pad := strings.Repeat("a", 16000)
	for _, tt := range []struct {
		name    string
		payload func(i int) string
	}{
		{"request lines", func(i int) string {
			target := fmt.Sprintf("/line/%d/", i)
			return "GET " + target + pad[:16000-len("GET  HTTP/1.1")-len(target)] + " HTTP/1.1\r\n"
		}},
		{"Host headers", func(i int) string {
			return fmt.Sprintf("GET /host/%d HTTP/1.1\r\nHost: %d.%s\r\n", i, i, pad[:16000])
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			pcap := filepath.Join(tmp, "adversarial.pcap")
			start := time.Now()
			writeFlows(t, pcap, flows, tt.payload)
			fi, _ := os.Stat(pcap)
			t.Logf("capture: %d MB in %v", fi.Size()>>20, time.Since(start).Round(time.Millisecond))
			dir := filepath.Join(tmp, "state")
			cmd := exec.Command(binary, "--dir", dir, "replay", "--json", "-o", os.DevNull, pcap)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			start = time.Now()
			rssBytes, err := runPeakRSS(cmd)
			if err != nil {
				t.Fatalf("replay: %v\n%s", err, stderr.String())
			}
			rss := rssBytes >> 10 // KiB
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			sum, err := flatSummary(lines[len(lines)-1])
			if err != nil {
				t.Fatalf("summary %q: %v", stderr.String(), err)
			}
			t.Logf("replay in %v: peak RSS %d MiB; summary %v", time.Since(start).Round(time.Millisecond), rss>>10, sum)
			if rss > limitKiB {
				t.Errorf("peak RSS %d KiB, over %d KiB", rss, limitKiB)
			}
			// Every connection is either reported (its request line was kept
			// until the end) or its request dropped at the buffer cap.
			if sum["packets"] != 2*flows || sum["buffer_overflows"] == 0 || sum["segments_denied"] != 0 ||
				sum["requests"]+sum["buffer_overflows"] != flows {
				t.Errorf("summary does not account for the %d connections: %v", flows, sum)
			}
		})
	}
}

// --max-flows and --max-buffer-mb set the caps, and replay counts what
// they drop.
func TestReplayCapFlags(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	small := filepath.Join(tmp, "small.pcap")
	writeCapture(t, small, 20, 0)
	long := filepath.Join(tmp, "long.pcap")
	pad := strings.Repeat("l", 15000)
	writeFlows(t, long, 200, func(i int) string { return fmt.Sprintf("GET /%d/%s HTTP/1.1\r\nHost: l.example\r\n", i, pad) })
	for _, tt := range []struct {
		name string
		args []string
		want func(sum map[string]uint64) bool
	}{
		// The connections are never closed: the first 5 stay tracked, the
		// SYN and request of each other one are ignored.
		{"--max-flows 5", []string{"--max-flows", "5", small},
			func(s map[string]uint64) bool { return s["requests"] == 5 && s["segments_denied"] == 2*15 }},
		{"--max-buffer-mb 1", []string{"--max-buffer-mb", "1", long},
			func(s map[string]uint64) bool {
				return s["requests"] > 0 && s["requests"] < 100 && s["requests"]+s["buffer_overflows"] == 200
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--dir", filepath.Join(t.TempDir(), "state"), "replay", "--json", "-o", os.DevNull}, tt.args...)
			_, stderr, code := run(t, nil, args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			sum, err := flatSummary(lines[len(lines)-1])
			if code != 0 || err != nil || !tt.want(sum) {
				t.Fatalf("exit %d, summary %v (%v)\n%s", code, sum, err, stderr)
			}
		})
	}
	for _, bad := range [][]string{{"--max-flows", "0"}, {"--max-buffer-mb", "0"}, {"--max-buffer-mb", "2000000"}} {
		if _, stderr, code := run(t, nil, append([]string{"--dir", filepath.Join(tmp, "state"), "replay"}, append(bad, small)...)...); code != 2 || !strings.Contains(stderr, bad[0]) {
			t.Errorf("%v: exit %d, %q", bad, code, stderr)
		}
	}
}

// The reassembly caps are checked on replay, capture and serve alike: a
// value out of range is a usage error naming the flag, given before any
// state is made. Before, --max-line 0 or below silently became the default.
func TestReassemblyFlagRanges(t *testing.T) {
	t.Parallel()
	for _, cmd := range [][]string{{"replay", "../../internal/capture/testdata/captures/http.pcap"}, {"serve", "--socket", "none"}, {"capture", "--iface", "lo"}} {
		for _, bad := range [][]string{{"--max-line", "0"}, {"--max-line", "-1"}, {"--max-line", "262145"}, {"--max-flows", "0"}, {"--max-buffer-mb", "0"},
			{"--max-frag-datagrams", "0"}, {"--max-frag-datagrams", "1048577"}, {"--max-frag-buffer-mb", "0"}, {"--max-frag-buffer-mb", "1025"},
			{"--frag-timeout-v4", "0s"}, {"--frag-timeout-v4", "-1s"}, {"--frag-timeout-v4", "61m"}, {"--frag-timeout-v6", "0s"}, {"--frag-timeout-v6", "2h"}} {
			t.Run(cmd[0]+" "+strings.Join(bad, " "), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "state")
				args := append(append([]string{"--dir", dir, cmd[0]}, bad...), cmd[1:]...)
				_, stderr, code := run(t, nil, args...)
				if code != 2 || !strings.Contains(stderr, bad[0]) {
					t.Fatalf("exit %d, want 2 naming %s: %s", code, bad[0], stderr)
				}
				if _, err := os.Stat(dir); err == nil {
					t.Errorf("a state was made at %s", dir)
				}
			})
		}
	}
}

// Streams of other protocols are named in the summaries, by kind, not
// counted as HTTP parse errors.
func TestReplayNonHTTPSummary(t *testing.T) {
	t.Parallel()
	pcap := filepath.Join(t.TempDir(), "other.pcap")
	starts := []string{"\x16\x03\x01\x00\x05hello", "SSH-2.0-OpenSSH_9.2\r\n", "\x16\x03\x01\x00\x05again"}
	writeFlows(t, pcap, len(starts), func(i int) string { return starts[i] })
	dir := filepath.Join(t.TempDir(), "state")
	_, text, code := run(t, nil, "--dir", dir, "replay", "-o", os.DevNull, pcap)
	if code != 0 || !strings.Contains(text, "streams of other protocols than HTTP/1.x:  tls 2  ssh 1\n") || !strings.Contains(text, "parse errors 0 ") {
		t.Fatalf("exit %d, summary:\n%s", code, text)
	}
	_, js, code := run(t, nil, "--dir", dir, "replay", "--json", "-o", os.DevNull, pcap)
	lines := strings.Split(strings.TrimSpace(js), "\n")
	if sum, err := flatSummary(lines[len(lines)-1]); code != 0 || err != nil || sum["non_http:tls"] != 2 || sum["non_http:ssh"] != 1 {
		t.Fatalf("exit %d, summary %v (%v)\n%s", code, sum, err, js)
	}
}
