package dedupproto_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/dedupproto"
)

func TestLoadTopology(t *testing.T) {
	top, err := dedupproto.LoadTopology("testdata/topology/two-networks.json")
	if err != nil {
		t.Fatal(err)
	}
	if top.Prefix != "crawl" || top.Deadline != 1500*time.Millisecond || len(top.Networks) != 2 {
		t.Fatalf("%+v", top)
	}
	for _, c := range []struct {
		ip   string
		net  string
		role dedupproto.Role
	}{
		{"10.1.0.1", "n1", dedupproto.CentreRole},
		{"10.1.0.3", "n1", dedupproto.HostRole},
		{"fd00::2", "n-2", dedupproto.HostRole},
		{"10.9.9.9", "", dedupproto.Unknown},
	} {
		n, role := top.Find(netip.MustParseAddr(c.ip))
		if role != c.role || (n == nil) != (c.net == "") || n != nil && n.Name != c.net {
			t.Errorf("Find(%s) = %v, %v; want %s, %v", c.ip, n, role, c.net, c.role)
		}
	}
}

// Every bad topology is refused, saying what is wrong.
func TestParseTopologyRefuses(t *testing.T) {
	const h = `{"ip":"10.0.0.2","redis":"redis://x:6379/0"}`
	const c = `{"ip":"10.0.0.1","redis":"redis://x:6379/0"}`
	for _, tc := range []struct{ in, want string }{
		{``, "EOF"},
		{`{"networks":[]}`, "no networks"},
		{`{"networks":[{"name":"n1","centre":` + c + `,"hosts":[]}]}`, "has no hosts"},
		{`{"networks":[{"name":"N1","centre":` + c + `,"hosts":[` + h + `]}]}`, `name "N1"`},
		{`{"networks":[{"name":"a-very-long-network-name","centre":` + c + `,"hosts":[` + h + `]}]}`, "1 to 16 bytes"},
		{`{"networks":[{"name":"n1","centre":` + c + `,"hosts":[` + c + `]}]}`, "IP 10.0.0.1 is also"},
		{`{"networks":[{"name":"n1","centre":` + c + `,"hosts":[` + h + `]},{"name":"n1","centre":{"ip":"10.1.0.1","redis":"r"},"hosts":[{"ip":"10.1.0.2","redis":"r"}]}]}`, `"n1" given twice`},
		{`{"networks":[{"name":"n1","centre":{"ip":"10.0.0.1"},"hosts":[` + h + `]}]}`, "no redis address"},
		{`{"networks":[{"name":"n1","centre":{"ip":"10.0.0.300","redis":"r"},"hosts":[` + h + `]}]}`, "centre: ip"},
		{`{"deadline":"soon","networks":[]}`, "deadline"},
		{`{"deadline":"-1s","networks":[{"name":"n1","centre":` + c + `,"hosts":[` + h + `]}]}`, "negative"},
		{`{"networks":[],"extra":1}`, `unknown field "extra"`},
		{`{"networks":[]} {}`, "more than one"},
	} {
		_, err := dedupproto.ParseTopology([]byte(tc.in))
		if !errors.Is(err, dedupproto.ErrTopology) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an ErrTopology saying %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParseTopology(f *testing.F) {
	f.Add([]byte(`{"networks":[{"name":"n1","centre":{"ip":"10.0.0.1","redis":"r"},"hosts":[{"ip":"10.0.0.2","redis":"r"}]}]}`))
	f.Add([]byte(`{"deadline":"1s","prefix":"p","networks":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		top, err := dedupproto.ParseTopology(b)
		if err != nil {
			if !errors.Is(err, dedupproto.ErrTopology) {
				t.Fatalf("%v does not wrap ErrTopology", err)
			}
			return
		}
		if err := top.Check(); err != nil {
			t.Fatalf("parsed, then refused: %v", err)
		}
		for _, n := range top.Networks {
			if got, role := top.Find(n.Centre.IP); got == nil || got.Name != n.Name || role != dedupproto.CentreRole {
				t.Fatalf("centre %s not found as %s's", n.Centre.IP, n.Name)
			}
		}
	})
}
