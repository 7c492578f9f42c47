package main_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// procStatus is a process's VmHWM (its own peak RSS since exec) and
// RssAnon from /proc, in bytes; ok is false once it has exited.
func procStatus(pid int) (hwm, anon int64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmHWM:":
			hwm, ok = kb<<10, true
		case "RssAnon:":
			anon = kb << 10
		}
	}
	return hwm, anon, ok
}

// h2cTableStream is an h2c client's stream that raises its HPACK table
// to 64 KiB (SETTINGS_HEADER_TABLE_SIZE as a server would have
// advertised it) and fills it twice over with small new fields, each a
// literal with incremental indexing: the most entries a table holds.
func h2cTableStream(t *testing.T) []byte {
	var out, hb bytes.Buffer
	out.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&out, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	enc := hpack.NewEncoder(&hb)
	enc.SetMaxDynamicTableSizeLimit(64 << 10)
	enc.SetMaxDynamicTableSize(64 << 10)
	for stream, size := uint32(1), 0; size < 2*64<<10; stream += 2 {
		hb.Reset()
		fs := [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "h2.example"}, {":path", fmt.Sprintf("/t/%d", stream)}}
		for k := range 100 {
			fs = append(fs, [2]string{fmt.Sprintf("x%d-%d", stream, k), strconv.Itoa(k)})
		}
		for _, f := range fs {
			if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
				t.Fatal(err)
			}
			size += len(f[0]) + len(f[1]) + 32
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// The h2c decoders' HPACK tables and buffers count in --max-buffer-mb:
// 4,000 connections each filling a 64 KiB table (what the decoders would
// hold uncapped: about 256 MiB as HPACK counts it, and 2.5 times that as
// golang.org/x/net/http2/hpack kept it) stay within the cap plus the
// process's fixed overhead, and the connections refused are counted. The
// capture is written into a FIFO that replay reads, and the replay's own
// anonymous memory (RssAnon in /proc) is sampled while it runs, and last
// after the last h2c packet and 8 MiB of filler have been taken from it:
// nothing depends on the machine's speed.
func TestReplayH2CTablesMemory(t *testing.T) {
	t.Parallel()
	const conns = 4000
	const capMiB = 16
	// The live heap is the cap and a fixed part (the runtime, the file
	// reader's buffers, FlowCost a connection: 2 MiB for 4,000); with
	// GOGC=100 the heap may grow to twice that before it is collected.
	const limit = (2*capMiB + 32) << 20
	stream := h2cTableStream(t)
	tmp := t.TempDir()
	fifo := filepath.Join(tmp, "h2c.pcap")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--dir", filepath.Join(tmp, "state"), "replay", "--json", "-o", os.DevNull,
		"--max-buffer-mb", strconv.Itoa(capMiB), fifo)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "GOGC=100", "GOMEMLIMIT=off")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// RssAnon, the heap and the runtime's own memory (not the state's
	// file pages nor the binary's, which VmHWM counts too), sampled
	// while replay runs; the Go runtime returns freed memory to the
	// system only minutes later, so the last sample is near the peak
	// however few were taken.
	var peakAnon atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if _, anon, ok := procStatus(pid); ok {
				peakAnon.Store(max(peakAnon.Load(), anon))
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pcapgo.NewWriter(bw)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1_790_000_000, 0)
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, EthernetType: layers.EthernetTypeIPv4}
	write := func(ip *layers.IPv4, l4 gopacket.SerializableLayer, payload []byte) {
		if err := gopacket.SerializeLayers(buf, opts, eth, ip, l4, gopacket.Payload(payload)); err != nil {
			t.Fatal(err)
		}
		ts = ts.Add(2 * time.Microsecond)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	server := net.IP{192, 0, 2, 1}
	for i := range conns {
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IP{198, 51, byte(i >> 8), byte(i)}, DstIP: server}
		tcp := &layers.TCP{SrcPort: 40000, DstPort: 80, Seq: 1000, SYN: true, Window: 65535}
		tcp.SetNetworkLayerForChecksum(ip)
		write(ip, tcp, nil)
		tcp.SYN, tcp.ACK, tcp.Seq = false, true, 1001
		for p := stream; len(p) > 0; {
			k := min(len(p), 1400)
			write(ip, tcp, p[:k])
			tcp.Seq += uint32(k)
			p = p[k:]
		}
	}
	// Filler past the reader's buffers and the pipe's: once written, the
	// h2c packets have been read and decoded.
	udpIP := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IP{198, 18, 0, 1}, DstIP: server}
	udp := &layers.UDP{SrcPort: 9, DstPort: 9}
	udp.SetNetworkLayerForChecksum(udpIP)
	for range 6000 {
		write(udpIP, udp, make([]byte, 1400))
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	hwm, anon, ok := procStatus(pid)
	close(stop)
	<-sampled
	peak := max(peakAnon.Load(), anon)
	f.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("replay: %v\n%s", err, stderr.String())
	}
	if !ok {
		t.Fatal("no VmHWM for replay")
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	sum, err := flatSummary(lines[len(lines)-1])
	if err != nil {
		t.Fatalf("summary %q: %v", stderr.String(), err)
	}
	t.Logf("--max-buffer-mb %d, %d h2c connections of %d bytes: peak RssAnon %d MiB (VmHWM %d MiB); h2c connections %d, lost %d, requests %d, buffer overflows %d",
		capMiB, conns, len(stream), peak>>20, hwm>>20, sum["h2c_connections"], sum["h2c_lost"], sum["requests"], sum["buffer_overflows"])
	if peak > limit {
		t.Errorf("peak RssAnon %d MiB, over %d MiB (twice --max-buffer-mb %d, for the garbage collector, plus the fixed overhead)", peak>>20, limit>>20, capMiB)
	}
	if sum["h2c_connections"] != conns || sum["h2c_lost"] == 0 || sum["h2c_lost"] == conns || sum["buffer_overflows"] < sum["h2c_lost"] {
		t.Errorf("the cap was not reached and counted: %v", sum)
	}
}
