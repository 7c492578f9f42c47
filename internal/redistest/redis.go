// Package redistest starts real redis-server processes for tests: the one
// place that knows how (a free loopback port, no persistence, killed by
// pid when the test ends).
package redistest

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server starts a real redis-server on a free loopback port and returns
// its redis:// address; it is stopped, by pid, when the test or benchmark
// ends. args are further redis-server arguments.
func Server(tb testing.TB, args ...string) string {
	tb.Helper()
	addr, _ := ServerOn(tb, FreePort(tb), args...)
	return addr
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ServerOn starts redis-server on port and returns its address and a
// function that kills it (SIGKILL) and waits for it; cleanup does the same.
func ServerOn(tb testing.TB, port int, args ...string) (addr string, kill func()) {
	tb.Helper()
	args = append([]string{"--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--save", "",
		"--appendonly", "no", "--dir", tb.TempDir()}, args...)
	cmd := exec.Command("redis-server", args...)
	if err := cmd.Start(); err != nil {
		tb.Fatal("redis-server (make test installs it): ", err)
	}
	var once sync.Once
	kill = func() { once.Do(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }) }
	tb.Cleanup(kill)
	WaitReady(tb, port)
	return fmt.Sprintf("redis://127.0.0.1:%d/0", port), kill
}

// WaitReady waits (5 s at most) until the redis-server on the loopback
// port answers PING, and fails the test if it does not.
func WaitReady(tb testing.TB, port int) {
	tb.Helper()
	for i := 0; ; i++ {
		if out, _ := exec.Command("redis-cli", "-p", fmt.Sprint(port), "ping").Output(); strings.TrimSpace(string(out)) == "PONG" {
			return
		}
		if i == 100 {
			tb.Fatal("redis-server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
