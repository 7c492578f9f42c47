package main_test

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every start-up error of serve: the message names the cause, the exit
// code is the documented one (2 for a configuration that cannot work, 1
// for a resource that is not available), there is no panic, and nothing is
// left behind: no socket file, no event log, nothing new in the state
// directory, and whatever occupied the socket path is untouched.
func TestServeStartupErrors(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatal(stderr)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	live := filepath.Join(tmp, "live")
	run(t, nil, "--dir", live, "init")
	_, liveSock := serve(t, live)

	file := filepath.Join(tmp, "file")
	os.WriteFile(file, []byte("not a socket\n"), 0o644)
	subdir := filepath.Join(tmp, "subdir")
	os.Mkdir(subdir, 0o755)
	// 108 bytes: one more than a Unix socket address holds.
	long := filepath.Join(tmp, strings.Repeat("s", 108-len(tmp)-1))
	if len(long) != 108 {
		t.Fatalf("long path is %d bytes", len(long))
	}

	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"remote without --allow-remote", []string{"--listen", "192.0.2.1:8080"}, 2,
			"--listen 192.0.2.1:8080: listening on a non-loopback address needs --allow-remote"},
		{"remote without --token", []string{"--listen", "0.0.0.0:8080", "--allow-remote"}, 2,
			"--listen 0.0.0.0:8080: listening on a non-loopback address needs a bearer token"},
		{"listen not host:port", []string{"--listen", "8080"}, 2, `--listen "8080": address 8080: missing port in address`},
		{"socket path too long", []string{"--socket", long}, 2,
			"socket " + long + ": path longer than the 107 bytes a Unix socket address holds"},
		{"--max-conns 0", []string{"--max-conns", "0"}, 2, "--max-conns 0: want at least 1"},
		{"unknown --user", []string{"--user", "no-such-user-x"}, 2, "--user no-such-user-x: no such user"},
		{"TCP port in use", []string{"--listen", busy.Addr().String()}, 1,
			"listen " + busy.Addr().String() + ": listen tcp " + busy.Addr().String() + ": bind: address already in use"},
		{"socket path is a file", []string{"--socket", file}, 1,
			"socket " + file + ": exists and is not a socket (a regular file)"},
		{"socket path is a directory", []string{"--socket", subdir}, 1,
			"socket " + subdir + ": exists and is not a socket (a directory)"},
		{"socket of a live server", []string{"--socket", liveSock}, 1,
			"socket " + liveSock + ": socket is in use by a running process"},
		// A missing directory is made (TestServeSocketDirAndMode); one under
		// a file cannot be.
		{"socket directory cannot be made", []string{"--socket", filepath.Join(file, "run", "api.sock")}, 1,
			"socket " + filepath.Join(file, "run", "api.sock") + ": lstat " + filepath.Join(file, "run") + ": not a directory"},
		{"no such interface", []string{"--iface", "nosuch0"}, 1, `capture: interface "nosuch0": route ip+net: no such network interface`},
	}
	names := func() []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}
	before := names()
	events := filepath.Join(tmp, "events.jsonl")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--dir", dir, "serve", "--events", events}, tt.args...)
			_, stderr, code := run(t, nil, args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.want)
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not one line of error:\n%s", stderr)
			}
			if after := names(); !slices.Equal(after, before) {
				t.Errorf("state directory now holds %v, before %v", after, before)
			}
			if _, err := os.Lstat(events); err == nil {
				t.Errorf("the event log %s was created", events)
				os.Remove(events)
			}
			if _, err := os.Lstat(long); err == nil {
				t.Errorf("%s was created", long)
			}
		})
	}
	// What occupied the socket paths is as it was.
	if b, err := os.ReadFile(file); err != nil || string(b) != "not a socket\n" {
		t.Errorf("the file at the socket path: %q %v", b, err)
	}
	if fi, err := os.Stat(subdir); err != nil || !fi.IsDir() {
		t.Errorf("the directory at the socket path: %v", err)
	}
	if code, body := post(t, unixClient(liveSock), "/v1/check", "http://still.example/\n"); code != 200 || body != "new\n" {
		t.Errorf("the live server after a second serve on its socket: %d %q", code, body)
	}
}
