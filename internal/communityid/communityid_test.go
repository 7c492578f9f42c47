package communityid

import (
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os"
	"testing"
)

// The spec's baseline (testdata/baseline.json: its TCP, UDP and SCTP rows
// of baseline_deflt, baseline_seed1 and baseline_nob64, made by the
// reference implementation from its pcaps; BSD-3, Corelight) and the
// rows of its README's table.
func TestBaseline(t *testing.T) {
	b, err := os.ReadFile("testdata/baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Proto        uint8
		Saddr, Daddr string
		Sport, Dport uint16
		Communityid  string
	}
	var sets map[string][]row
	if err := json.Unmarshal(b, &sets); err != nil {
		t.Fatal(err)
	}
	sets["readme"] = []row{
		{6, "1.2.3.4", "5.6.7.8", 1122, 3344, "1:wCb3OG7yAFWelaUydu0D+125CLM="},
		{6, "5.6.7.8", "1.2.3.4", 3344, 1122, "1:wCb3OG7yAFWelaUydu0D+125CLM="},
		{17, "1.2.3.4", "5.6.7.8", 1122, 3344, "1:0Mu9InQx6z4ZiCZM/7HXi2WMhOg="},
		{132, "1.2.3.4", "5.6.7.8", 1122, 3344, "1:EKt4MsxuyaE6mL+hmrEkQ9csDD8="},
	}
	n := 0
	for name, rows := range sets {
		for _, r := range rows {
			src := netip.AddrPortFrom(netip.MustParseAddr(r.Saddr), r.Sport)
			dst := netip.AddrPortFrom(netip.MustParseAddr(r.Daddr), r.Dport)
			var got string
			switch name {
			case "seed1":
				got = string(Append(nil, 1, r.Proto, src, dst))
			case "nob64":
				s := Sum(0, r.Proto, src, dst)
				got = "1:" + hex.EncodeToString(s[:])
			default:
				got = string(Append(nil, 0, r.Proto, src, dst))
			}
			if got != r.Communityid {
				t.Errorf("%s %d %v -> %v: %s, want %s", name, r.Proto, src, dst, got, r.Communityid)
			}
			n++
		}
	}
	if n < 28 {
		t.Fatalf("only %d vectors", n)
	}
}

// An IPv4-mapped IPv6 address is its IPv4 address; the same flow both
// ways has one ID; Append allocates nothing into a buffer with room.
func TestMappedAndAllocations(t *testing.T) {
	a := netip.MustParseAddrPort("128.232.110.120:34855")
	m := netip.AddrPortFrom(netip.AddrFrom16(a.Addr().As16()), a.Port())
	d := netip.MustParseAddrPort("66.35.250.204:80")
	if got := string(Append(nil, 0, TCP, m, d)); got != "1:LQU9qZlK+B5F3KDmev6m5PMibrg=" {
		t.Errorf("mapped: %s", got)
	}
	buf := make([]byte, 0, Len)
	if n := testing.AllocsPerRun(100, func() { buf = Append(buf[:0], 0, TCP, d, a) }); n != 0 || len(buf) != Len {
		t.Errorf("%v allocations, %d bytes", n, len(buf))
	}
}
