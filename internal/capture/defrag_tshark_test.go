package capture

import (
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// TestDefragTsharkAgrees writes a capture of HTTP requests sent as IPv4
// and IPv6 fragments (in order, reversed, with a duplicate), one request
// whose last fragment is missing, and checks that urldedupd finds the
// requests tshark finds (tshark reassembles IP fragments by default).
func TestDefragTsharkAgrees(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatal("tshark is needed (make test installs it): ", err)
	}
	path := filepath.Join(t.TempDir(), "frag.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeRaw); err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1700000000, 0)
	write := func(b []byte) {
		ts = ts.Add(time.Millisecond)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(b), Length: len(b)}, b); err != nil {
			t.Fatal(err)
		}
	}
	flows := []struct {
		cli, srv string
		order    string // in, reversed, dup, nolast
	}{
		{"10.1.0.1:40001", "10.1.0.2:80", "in"},
		{"10.1.0.1:40002", "10.1.0.2:80", "reversed"},
		{"[fd00::1]:40003", "[fd00::2]:80", "in"},
		{"[fd00::1]:40004", "[fd00::2]:8080", "dup"},
		{"10.1.0.1:40005", "10.1.0.2:80", "nolast"},
		{"[fd00::1]:40006", "[fd00::2]:80", "nolast"},
	}
	for i, fl := range flows {
		cli, srv := netip.MustParseAddrPort(fl.cli), netip.MustParseAddrPort(fl.srv)
		host := "frag" + string(rune('a'+i)) + ".example"
		req := "GET /" + fl.order + "/" + strings.Repeat("p", 2500) + " HTTP/1.1\r\nHost: " + host + "\r\nX-Long: " + strings.Repeat("h", 1500) + "\r\n\r\n"
		write(frame(t, linkRaw, tcpSeg{src: cli, dst: srv, seq: 99, syn: true}))
		write(frame(t, linkRaw, tcpSeg{src: srv, dst: cli, seq: 499, syn: true, ack: true}))
		frags := fragmentIP(t, frame(t, linkRaw, tcpSeg{src: cli, dst: srv, seq: 100, ack: true, payload: req}), 576, uint32(100+i))
		switch fl.order {
		case "reversed":
			for i, j := 0, len(frags)-1; i < j; i, j = i+1, j-1 {
				frags[i], frags[j] = frags[j], frags[i]
			}
		case "dup":
			frags = append(frags[:2], frags[1:]...)
		case "nolast":
			frags = frags[:len(frags)-1]
		}
		for _, b := range frags {
			write(b)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tshark", "-n", "-r", path, "-Y", "http.request", "-T", "fields",
		"-e", "http.request.method", "-e", "http.request.full_uri").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var fromTshark []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fromTshark = append(fromTshark, strings.Replace(line, "\t", " ", 1))
	}
	got, st, err := replay(t, path)
	sort.Strings(got)
	sort.Strings(fromTshark)
	if err != nil || len(got) != 4 || !reflect.DeepEqual(got, fromTshark) {
		t.Fatalf("urldedupd and tshark differ (%v)\nurldedupd %q\ntshark    %q", err, got, fromTshark)
	}
	if st.Defrag.Reassembled != 4 || st.Defrag.Timeouts+st.Defrag.Evicted+st.Defrag.Invalid != 0 {
		t.Fatalf("stats %+v", st.Defrag)
	}
}
