package main_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// Live VLAN tags: the kernel takes the outer 802.1Q or 802.1ad tag off a
// received frame and hands it to packet sockets beside the frame. Tagged
// HTTP requests are injected with a raw socket into one end of a veth
// (scripts/vlaninject.py: untagged, 802.1Q, 802.1ad, and 802.1ad over
// 802.1Q); capture --iface on the other end reports each with the
// encapsulation it had on the wire, and tcpdump's pcap of the same frames
// (libpcap puts the tag back too) replays to the same records.
func TestCaptureLiveVLANTags(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	cliIf := strings.TrimSuffix(srvIf, "a") + "b"
	mac := macOf(t, srv, srvIf)
	tmp := t.TempDir()
	pcap := filepath.Join(tmp, "vlan.pcap")
	stopDump := tcpdump(t, srv, srvIf, "", pcap) // no filter: "tcp" would miss the QinQ frames, their inner tag in the data
	capt := startCapture(t, srv, srvIf, filepath.Join(tmp, "state"), "--json")
	sent, err := nettest.Command(cli, "python3", "../../scripts/vlaninject.py",
		cliIf, mac, "192.0.2.2", "192.0.2.1", "8080").CombinedOutput()
	if err != nil || strings.TrimSpace(string(sent)) != "8" {
		t.Fatalf("vlaninject: %v %s", err, sent)
	}
	want := []string{"http://vlan.example/plain ", "http://vlan.example/dot1q vlan",
		"http://vlan.example/dot1ad qinq", "http://vlan.example/qinq qinq/vlan"}
	records := func(out []string) []string {
		t.Helper()
		var got []string
		for _, l := range out {
			var r struct{ URL, Encap string }
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			got = append(got, r.URL+" "+r.Encap)
		}
		return got
	}
	capt.waitLines(len(want))
	summary := capt.stop(t)
	stopDump()
	live := records(capt.lines())
	slices.Sort(live) // the workers (one per core by default) report flows in no fixed order
	if !slices.Equal(live, slices.Sorted(slices.Values(want))) {
		t.Fatalf("capture --iface reports\n%q\nwant\n%q\n%s", live, want, summary)
	}
	stdoutReplay, stderrReplay, code := run(t, nil, "--dir", filepath.Join(tmp, "state2"), "replay", "--json", pcap)
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderrReplay)
	}
	if fromPcap := records(strings.Split(strings.TrimSpace(stdoutReplay), "\n")); !slices.Equal(fromPcap, want) {
		t.Fatalf("replay of tcpdump's pcap reports\n%q\nwant\n%q", fromPcap, want)
	}
}
