package main_test

import (
	be "encoding/binary"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// fragments4 serializes an IPv4 TCP segment carrying payload and splits it
// into fragments of at most size payload bytes (a multiple of 8).
func fragments4(t *testing.T, srcPort uint16, id uint16, payload string, size int) [][]byte {
	t.Helper()
	pkt := serializeTCP(t, &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}, srcPort, payload)
	var out [][]byte
	for off := 0; off < len(pkt)-20; off += size {
		f := append(append([]byte(nil), pkt[:20]...), pkt[20+off:min(20+off+size, len(pkt))]...)
		be.BigEndian.PutUint16(f[2:], uint16(len(f)))
		be.BigEndian.PutUint16(f[4:], id)
		fo := uint16(off / 8)
		if 20+off+size < len(pkt) {
			fo |= 0x2000
		}
		be.BigEndian.PutUint16(f[6:], fo)
		out = append(out, f)
	}
	return out
}

// serializeTCP serializes ip (an IPv4 or IPv6 layer) and a TCP segment
// from srcPort to port 80 carrying payload.
func serializeTCP(t *testing.T, ip interface {
	gopacket.NetworkLayer
	gopacket.SerializableLayer
}, srcPort uint16, payload string) []byte {
	t.Helper()
	tcp := &layers.TCP{SrcPort: layers.TCPPort(srcPort), DstPort: 80, Seq: 100, ACK: true, PSH: true, Window: 65535}
	tcp.SetNetworkLayerForChecksum(ip)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ip, tcp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReplayFragmentsSummary replays a request sent in IPv4 fragments and
// one whose last fragment never comes: the first is found, and both
// summaries count the fragments and the datagram reassembled; the
// incomplete one is still within its timeout when the file ends, so it is
// not counted as dropped.
func TestReplayFragmentsSummary(t *testing.T) {
	t.Parallel()
	req := "GET /frag HTTP/1.1\r\nHost: frag.example\r\nX-Pad: " + strings.Repeat("x", 1000) + "\r\n\r\n"
	frames := fragments4(t, 40000, 1, req, 256)
	lost := fragments4(t, 40001, 2, req, 256)
	frames = append(frames, lost[:len(lost)-1]...)
	path := filepath.Join(t.TempDir(), "frag.pcap")
	writePcap(t, path, layers.LinkTypeRaw, frames)
	stdout, stderr, code := run(t, nil, "--dir", t.TempDir(), "replay", path)
	if code != 0 || strings.TrimSpace(stdout) != "http://frag.example/frag" ||
		!strings.Contains(stderr, "IP fragments "+strconv.Itoa(len(frames))) ||
		!strings.Contains(stderr, "IP datagrams reassembled 1  dropped incomplete after the timeout 0  dropped at the cap 0  dropped invalid 0") {
		t.Fatalf("code %d\nstdout %q\nstderr %s", code, stdout, stderr)
	}
	_, stderr, code = run(t, nil, "--dir", t.TempDir(), "replay", "--json", "-o", os.DevNull, path)
	if code != 0 || !strings.Contains(stderr, `"ip_fragments":`+strconv.Itoa(len(frames))+`,"ip_datagrams_reassembled":1,`) {
		t.Fatalf("code %d\nstderr %s", code, stderr)
	}
}
