package main_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
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

// writeCapture writes a pcap of one connection per URL (a SYN, then the
// request), from distinct clients to 192.0.2.1:80, and returns how many
// distinct URLs it holds.
func writeCapture(t *testing.T, path string, n int, repeat float64) int {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pcapgo.NewWriter(bw)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1_790_000_000, 0)
	buf := gopacket.NewSerializeBuffer()
	packet := func(i int, seq uint32, syn bool, payload string) {
		client := net.IP{198, 51, byte(i >> 8), byte(i)}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: client, DstIP: net.IP{192, 0, 2, 1}}
		tcp := &layers.TCP{SrcPort: layers.TCPPort(10000 + i>>16), DstPort: 80, Seq: seq, SYN: syn, ACK: !syn, PSH: !syn, Window: 65535}
		tcp.SetNetworkLayerForChecksum(ip)
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, EthernetType: layers.EthernetTypeIPv4}
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
			t.Fatal(err)
		}
		ts = ts.Add(10 * time.Microsecond)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	distinct := 0
	for i := range n {
		id := distinct
		if distinct > 0 && rng.Float64() < repeat {
			id = rng.IntN(distinct)
		} else {
			distinct++
		}
		packet(i, 1000, true, "")
		packet(i, 1001, false, fmt.Sprintf("GET /page/%d HTTP/1.1\r\nHost: replay%d.example\r\n\r\n", id, id%13))
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return distinct
}

// replay --backend decides through Redis, in batches with several in
// flight, and prints what a local replay prints, in the same order.
func TestRedisReplay(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	addr, _, _ := redisServer(t, tmp)
	backend := "redis://" + addr + "/0"
	pcap := filepath.Join(tmp, "many.pcap")
	distinct := writeCapture(t, pcap, 30_000, 0.5)

	local, stderr, code := run(t, nil, "--dir", filepath.Join(tmp, "local"), "replay", "--all", pcap)
	if code != 0 {
		t.Fatal(stderr)
	}
	if n := strings.Count(local, "new\t"); n != distinct {
		t.Fatalf("local replay: %d new of %d distinct URLs\n%s", n, distinct, stderr)
	}
	before := setbitCalls(t, addr)
	remote, stderr, code := run(t, nil, "--backend", backend, "replay", "--all", pcap)
	if code != 0 {
		t.Fatal(stderr)
	}
	if remote != local {
		t.Fatal("replay through Redis prints other records than the local replay")
	}
	if calls := setbitCalls(t, addr) - before; calls > 30_000 {
		t.Fatalf("%d SETBIT calls for 30000 requests", calls)
	}
	again, stderr, code := run(t, nil, "--backend", backend, "replay", pcap)
	if code != 0 || again != "" || !strings.Contains(stderr, fmt.Sprintf("new 0  dup 30000")) {
		t.Fatalf("second replay: exit %d, %d bytes out, %s", code, len(again), stderr)
	}
}

// Redis stopping in the middle of a replay ends it with a clear error and
// exit code 5; every URL printed new before is still set after a restart.
func TestRedisStoppedMidReplay(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	addr, stop, start := redisServer(t, tmp)
	backend := "redis://" + addr + "/0"
	pcap := filepath.Join(tmp, "many.pcap")
	writeCapture(t, pcap, 200_000, 0.2)
	cmd := exec.Command(binary, "--backend", backend, "--redis-timeout", "10s", "replay", pcap)
	got := stopRedisMidRun(t, cmd, stop, 0)
	start()
	stillSet(t, backend, got)
}
