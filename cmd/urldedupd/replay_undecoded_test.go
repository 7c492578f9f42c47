package main_test

import (
	"bytes"
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

// writePcap writes frames of one link type to a pcap file.
func writePcap(t *testing.T, path string, lt layers.LinkType, frames [][]byte) {
	t.Helper()
	at := make([]time.Time, len(frames))
	for i := range at {
		at[i] = time.Unix(1_700_000_000, int64(i)*1000)
	}
	writePcapAt(t, path, lt, frames, at)
}

// writePcapAt writes frames to a pcap file with the timestamps at.
func writePcapAt(t *testing.T, path string, lt layers.LinkType, frames [][]byte, at []time.Time) {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65536, lt); err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: at[i], CaptureLength: len(f), Length: len(f)}
		if err := w.WritePacket(ci, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// radiotapFrames are 802.11 data frames with a radiotap header (the
// smallest: no fields), carrying LLC/SNAP, IPv4 and a ping (an ICMP echo);
// the 802.11 frame is built with gopacket's serializers.
func radiotapFrames(t *testing.T, n int) [][]byte {
	t.Helper()
	a, b := net.HardwareAddr{2, 0, 0, 0, 0, 1}, net.HardwareAddr{2, 0, 0, 0, 0, 2}
	var out [][]byte
	for i := range n {
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolICMPv4, SrcIP: net.IP{192, 0, 2, 1}, DstIP: net.IP{192, 0, 2, 2}}
		buf := gopacket.NewSerializeBuffer()
		err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			&layers.Dot11{Type: layers.Dot11TypeData, Flags: layers.Dot11FlagsToDS, Address1: b, Address2: a, Address3: b, SequenceNumber: uint16(i)},
			&layers.LLC{DSAP: 0xaa, SSAP: 0xaa, Control: 3},
			&layers.SNAP{OrganizationalCode: []byte{0, 0, 0}, Type: layers.EthernetTypeIPv4},
			ip, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0), Seq: uint16(i)})
		if err != nil {
			t.Fatal(err)
		}
		radiotap := []byte{0, 0, 8, 0, 0, 0, 0, 0} // version 0, length 8, no fields
		out = append(out, append(radiotap, buf.Bytes()...))
	}
	return out
}

// A capture whose link type is not decoded (IEEE 802.15.4, which tshark
// reads as such): replay names it with its frame count in the summary and
// the --json summary, and exits 6; with a decodable file beside it, that
// file's URLs are still printed, the exit code is still 6 and the message
// names the file. 802.11 frames behind radiotap carrying pings are read:
// other frames, exit 0.
func TestReplayUndecoded(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	wpan := filepath.Join(tmp, "wpan.pcap")
	frames := make([][]byte, 26)
	for i := range frames {
		frames[i] = []byte{0x41, 0xc8, byte(i), 0xff, 0xff, 0xff, 0xff} // data, broadcast
	}
	writePcap(t, wpan, 195, frames)
	out, err := exec.Command("tshark", "-r", wpan, "-T", "fields", "-e", "frame.protocols").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) != 26 || !strings.HasPrefix(lines[0], "wpan") {
		t.Fatalf("tshark reads %d frames as %q", len(lines), lines[0])
	}
	radio := filepath.Join(tmp, "radiotap.pcap")
	writePcap(t, radio, layers.LinkTypeIEEE80211Radio, radiotapFrames(t, 26))
	out, err = exec.Command("tshark", "-r", radio, "-T", "fields", "-e", "frame.protocols").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) != 26 || !strings.HasPrefix(lines[0], "radiotap:wlan_radio:wlan:llc:ip:icmp") {
		t.Fatalf("tshark reads %d frames as %q", len(lines), lines[0])
	}
	empty := filepath.Join(tmp, "empty.pcap")
	writePcap(t, empty, layers.LinkTypeEthernet, nil)
	const sentence = "26 frames of link type 195 (IEEE 802.15.4) were not decoded\n"
	state := filepath.Join(tmp, "state")

	stdout, stderr, code := run(t, nil, "--dir", state, "replay", wpan)
	if code != 6 || stdout != "" || !strings.Contains(stderr, sentence) ||
		!strings.Contains(stderr, wpan+": no frame could be decoded (26 frames read)") {
		t.Fatalf("replay 802.15.4: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	_, stderr, code = run(t, nil, "--dir", state, "replay", "--json", "-o", os.DevNull, wpan)
	sum, err := flatSummary(strings.SplitN(stderr, "\n", 2)[0])
	if err != nil {
		t.Fatalf("json summary: %v in %q", err, stderr)
	}
	if code != 6 || sum["packets"] != 26 || sum["malformed_frames"] != 0 || sum["undecoded_frames"] != 26 ||
		sum["undecoded:linktype:195"] != 26 || sum["other_frames"] != 0 {
		t.Fatalf("replay --json: exit %d, summary %v", code, sum)
	}

	_, stderr, code = run(t, nil, "--dir", state, "replay", "--json", "-o", os.DevNull, radio)
	sum, _ = flatSummary(strings.SplitN(stderr, "\n", 2)[0])
	if code != 0 || sum["other_frames"] != 26 || sum["other:ipproto:1"] != 26 || sum["undecoded_frames"] != 0 {
		t.Fatalf("replay radiotap: exit %d, summary %v", code, sum)
	}

	stdout, stderr, code = run(t, nil, "--dir", filepath.Join(tmp, "state2"), "replay", capturePath, wpan, empty)
	got := strings.Fields(stdout)
	if code != 6 || len(got) != len(expectedURLs(t)) || !strings.Contains(stderr, sentence) ||
		!strings.Contains(stderr, empty+": no frame could be decoded (0 frames read)") || strings.Contains(stderr, capturePath+":") {
		t.Fatalf("replay of three files: exit %d, %d URLs, stderr %q", code, len(got), stderr)
	}

	_, stderr, code = run(t, nil, "--dir", filepath.Join(tmp, "state3"), "replay", capturePath)
	if code != 0 || strings.Contains(stderr, "not decoded") {
		t.Fatalf("replay of a decodable file: exit %d, stderr %q", code, stderr)
	}
}
