package redistest

import (
	"net"
	"strings"
	"testing"
)

// A port another process took between FreePort and the bind makes
// redis-server exit; start says so (Start then tries another port) rather
// than waiting for a PING that never comes.
func TestStartPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	p := &Proc{Port: port, Addr: l.Addr().String(), Dir: t.TempDir()}
	if err := p.start(t); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("start on a taken port: %v, want an error saying the server exited", err)
	}
	// Start picks free ports and answers PING.
	q := Start(t, t.TempDir())
	if !ping(q.Port) {
		t.Fatal("started server does not answer PING")
	}
	q.Kill()
	if ping(q.Port) {
		t.Fatal("killed server still answers PING")
	}
	q.Restart(t)
	if !ping(q.Port) {
		t.Fatal("restarted server does not answer PING")
	}
}
