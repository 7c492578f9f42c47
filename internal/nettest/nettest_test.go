package nettest_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// namespaces lists the network namespaces of the machine.
func namespaces(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v %s", err, out)
	}
	return string(out)
}

// A client in one namespace of a pair reaches a server in the other over
// the veth, and both namespaces are gone when the test that made them ends.
func TestVeth(t *testing.T) {
	var srv, cli string
	t.Run("pair", func(t *testing.T) {
		var srvIf string
		srv, cli, srvIf = nettest.Veth(t)
		if out, err := nettest.Command(srv, "ip", "-o", "addr", "show", "dev", srvIf).CombinedOutput(); err != nil ||
			!strings.Contains(string(out), nettest.ServerAddr+"/24") {
			t.Fatalf("%s in %s: %v %s", srvIf, srv, err, out)
		}
		nettest.Start(t, srv, "python3", "-m", "http.server", "--bind", nettest.ServerAddr, "8080")
		nettest.WaitListen(t, srv, 8080)
		out, err := nettest.Command(cli, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{local_ip}",
			"--max-time", "30", "http://"+nettest.ServerAddr+":8080/").CombinedOutput()
		if err != nil || string(out) != "200 "+nettest.ClientAddr {
			t.Fatalf("curl from %s: %v %q", cli, err, out)
		}
		// The server is not reachable from the test's own namespace.
		if out, err := exec.Command("curl", "-s", "--max-time", "2", "http://"+nettest.ServerAddr+":8080/").CombinedOutput(); err == nil {
			t.Fatalf("the server answered outside its namespace: %s", out)
		}
	})
	if list := namespaces(t); strings.Contains(list, srv) || strings.Contains(list, cli) {
		t.Fatalf("%s or %s left behind:\n%s", srv, cli, list)
	}
}

// A namespace has its own lo, up, and is gone after the test.
func TestNamespace(t *testing.T) {
	var ns string
	t.Run("ns", func(t *testing.T) {
		ns = nettest.Namespace(t)
		nettest.Start(t, ns, "python3", "-m", "http.server", "--bind", "127.0.0.1", "8081")
		nettest.WaitListen(t, ns, 8081)
		out, err := nettest.Command(ns, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "30",
			"http://127.0.0.1:8081/").CombinedOutput()
		if err != nil || string(out) != "200" {
			t.Fatalf("curl in %s: %v %q", ns, err, out)
		}
	})
	if strings.Contains(namespaces(t), ns) {
		t.Fatalf("%s left behind", ns)
	}
}

// Link sets the MTU it is given on both ends.
func TestLinkMTU(t *testing.T) {
	a, b := nettest.Namespace(t), nettest.Namespace(t)
	aIf, bIf := nettest.Link(t, a, b, 576)
	for _, end := range [][2]string{{a, aIf}, {b, bIf}} {
		out, err := nettest.Command(end[0], "ip", "-o", "link", "show", "dev", end[1]).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "mtu 576") || !strings.Contains(string(out), "UP") {
			t.Fatalf("%s in %s: %v %s", end[1], end[0], err, out)
		}
	}
}
