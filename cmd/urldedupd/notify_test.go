package main_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serve tells a Type=notify service manager READY=1 once its API socket
// answers, and STOPPING=1 when it stops; a socket path and an abstract
// name ('@') both work, as systemd hands out either.
func TestServeNotifiesReadiness(t *testing.T) {
	t.Parallel()
	for _, abstract := range []bool{false, true} {
		tmp := t.TempDir()
		name := filepath.Join(tmp, "notify.sock")
		env := name
		if abstract {
			name = "\x00urldedupd-test-" + filepath.Base(tmp)
			env = "@" + name[1:]
		}
		conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		sock := filepath.Join(tmp, "api.sock")
		cmd := exec.Command(binary, "--dir", filepath.Join(tmp, "state"), "serve", "--socket", sock)
		cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+env)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		read := func() string {
			buf := make([]byte, 512)
			conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("no notification (NOTIFY_SOCKET=%q): %v", env, err)
			}
			return string(buf[:n])
		}
		if msg := read(); !strings.Contains(msg, "READY=1") {
			t.Fatalf("first notification %q, want READY=1", msg)
		}
		if c, err := net.Dial("unix", sock); err != nil {
			t.Fatalf("READY=1 said, but the API socket does not answer: %v", err)
		} else {
			c.Close()
		}
		syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		if msg := read(); msg != "STOPPING=1" {
			t.Errorf("notification at SIGTERM %q, want STOPPING=1", msg)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve after SIGTERM: %v", err)
		}
	}
}
