package daemon

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A live server whose backlog is full (it is busy, not accepting) refuses
// a connection with EAGAIN, not ECONNREFUSED: its socket is not stale, and
// a second serve must leave it alone rather than remove it and take the
// path over. Before, any failed dial removed the socket.
func TestListenUnixBusyServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "api.sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	// Fill the backlog: connections the server never accepts.
	full := false
	for i := 0; i < 64 && !full; i++ {
		c, err := net.DialTimeout("unix", path, time.Second)
		if err != nil {
			if !errors.Is(err, syscall.EAGAIN) {
				t.Fatalf("dial %d: %v, want EAGAIN once the backlog is full", i, err)
			}
			full = true
			break
		}
		defer c.Close()
	}
	if !full {
		t.Fatal("the backlog never filled")
	}
	before, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := listenUnix(path, 0, nil)
	if err == nil {
		l.Close()
		t.Fatal("listenUnix took over the socket of a live, busy server")
	}
	if !errors.Is(err, ErrSocketInUse) {
		t.Errorf("listenUnix: %v, want ErrSocketInUse", err)
	}
	after, err := os.Lstat(path)
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("the live server's socket was removed or replaced: %v", err)
	}
}

// A socket file nobody listens on (a server that died) is replaced.
func TestListenUnixStaleSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "api.sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	syscall.Close(fd) // bound, never listened: connecting is refused
	l, err := listenUnix(path, 0, nil)
	if err != nil {
		t.Fatalf("listenUnix over a stale socket: %v", err)
	}
	defer l.Close()
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		t.Fatalf("dial the new socket: %v", err)
	}
	c.Close()
}
