// Package nettest makes real Linux network namespaces for live tests: a
// pair of namespaces joined by a veth (a server and a client on a private
// link), or one namespace with only its loopback up. It runs commands
// inside them and removes everything, by pid and by name, when the test
// ends. It is the one place that knows how; the tests that use it need
// root and are skipped without it.
package nettest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Addresses of the two ends of the link Veth makes (TEST-NET-1, reachable
// inside the namespaces only).
const (
	ServerAddr = "192.0.2.1"
	ClientAddr = "192.0.2.2"
)

// listenTries and listenPoll bound WaitListen: 10 s, generous on a loaded
// machine.
const (
	listenTries = 100
	listenPoll  = 100 * time.Millisecond
)

// made counts the names this process made, so that two namespaces (or
// pairs) of one test binary never share a name; the pid keeps test
// binaries running side by side apart.
var made atomic.Int32

// name returns a fresh name with prefix, short enough for an interface
// name (15 bytes) once a one-letter suffix is added: prefix, pid, x, count.
func name(prefix string) string {
	return fmt.Sprintf("%s%dx%d", prefix, os.Getpid()%100000, made.Add(1)%1000)
}

func needRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("network namespaces need root")
	}
}

// ip runs ip(8) with args, failing the test on an error.
func ip(tb testing.TB, args ...string) {
	tb.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		tb.Fatalf("ip %s: %v %s", strings.Join(args, " "), err, out)
	}
}

// Namespace makes a network namespace with only its loopback up and
// returns its name; it is deleted when the test ends.
func Namespace(tb testing.TB) string {
	tb.Helper()
	needRoot(tb)
	ns := name("udt")
	ip(tb, "netns", "add", ns)
	tb.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	ip(tb, "-n", ns, "link", "set", "lo", "up")
	return ns
}

// Link joins the namespaces a and b with a veth pair, both ends up and
// without addresses, and returns the name of its end in a and in b. mtu
// sets both ends' MTU when it is not zero. The pair goes when either
// namespace is deleted.
func Link(tb testing.TB, a, b string, mtu int) (aIf, bIf string) {
	tb.Helper()
	id := name("udv")
	aIf, bIf = id+"a", id+"b"
	args := []string{"link", "add", aIf, "netns", a}
	if mtu != 0 {
		args = append(args, "mtu", fmt.Sprint(mtu))
	}
	args = append(args, "type", "veth", "peer", "name", bIf, "netns", b)
	if mtu != 0 {
		args = append(args, "mtu", fmt.Sprint(mtu))
	}
	ip(tb, args...)
	ip(tb, "-n", a, "link", "set", aIf, "up")
	ip(tb, "-n", b, "link", "set", bIf, "up")
	return aIf, bIf
}

// Addr adds the address cidr ("192.0.2.1/24") to the interface dev in the
// namespace ns.
func Addr(tb testing.TB, ns, dev, cidr string) {
	tb.Helper()
	ip(tb, "-n", ns, "addr", "add", cidr, "dev", dev)
}

// Veth makes two network namespaces joined by a veth pair: the server
// namespace srv with ServerAddr on its end srvIf, and the client namespace
// cli with ClientAddr, loopbacks up. Both namespaces, and with them the
// veth, are deleted when the test ends.
func Veth(tb testing.TB) (srv, cli, srvIf string) {
	tb.Helper()
	srv, cli = Namespace(tb), Namespace(tb)
	srvIf, cliIf := Link(tb, srv, cli, 0)
	Addr(tb, srv, srvIf, ServerAddr+"/24")
	Addr(tb, cli, cliIf, ClientAddr+"/24")
	return srv, cli, srvIf
}

// Command returns the command args[0] with args[1:] to run inside the
// namespace ns (through ip netns exec, which passes signals on).
func Command(ns string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...)
}

// Start starts args inside the namespace ns and kills it, by pid, when the
// test ends.
func Start(tb testing.TB, ns string, args ...string) *exec.Cmd {
	tb.Helper()
	cmd := Command(ns, args...)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd
}

// WaitListen waits, bounded, until something listens on TCP port in the
// namespace ns, and fails the test when nothing does.
func WaitListen(tb testing.TB, ns string, port int) {
	tb.Helper()
	for i := 0; ; i++ {
		out, _ := Command(ns, "ss", "-ltnH", fmt.Sprintf("sport = :%d", port)).Output()
		if strings.Contains(string(out), "LISTEN") {
			return
		}
		if i == listenTries {
			tb.Fatalf("nothing listens on port %d in %s", port, ns)
		}
		time.Sleep(listenPoll)
	}
}
