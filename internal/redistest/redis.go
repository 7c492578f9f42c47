// Package redistest starts real redis-server processes for tests, single
// servers and clusters: the one place that knows how (a free loopback
// port, started again on another port when a concurrent test took the
// port first, waited for with a bound, killed by pid when the test ends).
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

// Bounds of a start: how many ports are tried, and how long one server may
// take to answer PING on a loaded machine.
const (
	startTries   = 5
	readyTimeout = 60 * time.Second
)

// Server starts a real redis-server on a free loopback port and returns
// its redis:// address; it is stopped, by pid, when the test or benchmark
// ends. args are further redis-server arguments.
func Server(tb testing.TB, args ...string) string {
	tb.Helper()
	p := Start(tb, tb.TempDir(), append([]string{"--appendonly", "no"}, args...)...)
	return "redis://" + p.Addr + "/0"
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

// ServerOn starts redis-server on port, without persistence, and returns
// its address and a function that kills it (SIGKILL) and waits for it;
// cleanup does the same. It fails the test if the port is taken.
func ServerOn(tb testing.TB, port int, args ...string) (addr string, kill func()) {
	tb.Helper()
	p := &Proc{Port: port, Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: tb.TempDir(),
		args: append([]string{"--appendonly", "no"}, args...)}
	if err := p.start(tb); err != nil {
		tb.Fatal(err)
	}
	return "redis://" + p.Addr + "/0", p.Kill
}

// Proc is a redis-server started by Start.
type Proc struct {
	Addr string // host:port on loopback
	Port int
	Dir  string // its working directory (AOF, nodes.conf)
	args []string

	mu     sync.Mutex
	pid    int
	exited chan struct{} // closed when the current process has exited
}

// Start starts redis-server on a free loopback port with its files in dir
// and args after the defaults (--save "", --protected-mode no). When the
// server exits before it answers (another test took the port between
// FreePort and the bind), it is started again on another port, up to 5
// times. It is killed by pid when the test ends.
func Start(tb testing.TB, dir string, args ...string) *Proc {
	tb.Helper()
	var err error
	for range startTries {
		port := FreePort(tb)
		p := &Proc{Port: port, Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, args: args}
		if err = p.start(tb); err == nil {
			return p
		}
	}
	tb.Fatalf("redis-server did not start on %d ports: %v", startTries, err)
	return nil
}

// start runs the server on p.Port and waits until it answers PING; an
// error says it exited first or did not answer within readyTimeout.
func (p *Proc) start(tb testing.TB) error {
	args := append([]string{"--bind", "127.0.0.1", "--port", fmt.Sprint(p.Port), "--dir", p.Dir,
		"--save", "", "--protected-mode", "no"}, p.args...)
	cmd := exec.Command("redis-server", args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal("redis-server (make test installs it): ", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.mu.Lock()
	p.pid, p.exited = cmd.Process.Pid, exited
	p.mu.Unlock()
	tb.Cleanup(p.Kill)
	deadline := time.Now().Add(readyTimeout)
	for {
		select {
		case <-exited:
			return fmt.Errorf("redis-server on port %d exited: %s", p.Port, lastLine(out.String()))
		default:
		}
		if ping(p.Port) {
			return nil
		}
		if time.Now().After(deadline) {
			p.Kill()
			return fmt.Errorf("redis-server on port %d did not answer PING within %v", p.Port, readyTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill kills the server (SIGKILL) and waits for it to exit; it does
// nothing when the server is not running.
func (p *Proc) Kill() {
	p.mu.Lock()
	pid, exited := p.pid, p.exited
	p.pid = 0
	p.mu.Unlock()
	if pid == 0 {
		return
	}
	syscall.Kill(pid, syscall.SIGKILL)
	<-exited
}

// Restart starts the server again on the same port and files, after Kill.
func (p *Proc) Restart(tb testing.TB) {
	tb.Helper()
	if err := p.start(tb); err != nil {
		tb.Fatal(err)
	}
}

// WaitReady waits (60 s at most) until the redis-server on the loopback
// port answers PING, and fails the test if it does not.
func WaitReady(tb testing.TB, port int) {
	tb.Helper()
	deadline := time.Now().Add(readyTimeout)
	for !ping(port) {
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server on port %d did not answer PING within %v", port, readyTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ping reports whether a server answers PING on the loopback port, with a
// short dial: a server that is not listening yet is asked again.
func ping(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 7)
	n, _ := c.Read(buf)
	return string(buf[:n]) == "+PONG\r\n"
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
