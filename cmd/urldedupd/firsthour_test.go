package main_test

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// The rough edges a new user met in the first hour (issue 25), each as it
// was reproduced.

// readmeSession returns the shell session under a README heading: each
// "$ " command with the lines it prints, as far as the end of the first
// code block after the heading.
func readmeSession(t *testing.T, heading string) (cmds []string, outs [][]string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README has no %q", heading)
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	block, _, _ := strings.Cut(rest, "```")
	for _, l := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			cmds, outs = append(cmds, c), append(outs, nil)
		} else if len(cmds) > 0 {
			outs[len(outs)-1] = append(outs[len(outs)-1], l)
		}
	}
	if len(cmds) == 0 {
		t.Fatalf("README %q shows no command", heading)
	}
	return cmds, outs
}

// The README's check example prints what it shows, run in order on a new
// state (it showed "dup dup" for a state it did not say).
func TestREADMECheckExample(t *testing.T) {
	t.Parallel()
	cmds, outs := readmeSession(t, "### check — ask without recording")
	env := append(os.Environ(), "URLDEDUPD_DIR="+filepath.Join(t.TempDir(), "state"),
		"PATH="+filepath.Dir(binary)+":"+os.Getenv("PATH"))
	for i, c := range cmds {
		cmd := exec.Command("bash", "-c", c)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("README: %s: %v", c, err)
		}
		if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !slices.Equal(got, outs[i]) {
			t.Errorf("README: %s\nprints %q\nREADME shows %q", c, got, outs[i])
		}
	}
}

// capture says it creates a state, and the requests sent while it does are
// captured: the socket is open before the state is made (they were lost,
// and the summary said 0 packets).
func TestCaptureWhileCreatingState(t *testing.T) {
	t.Parallel()
	srv, cli, srvIf := nettest.Veth(t)
	nettest.Start(t, srv, "python3", "../../scripts/httpserver.py", "192.0.2.1", "8080")
	nettest.WaitListen(t, srv, 8080)
	state := filepath.Join(t.TempDir(), "state")
	sent := false
	capt := startCaptureCreating(t, srv, srvIf, state, func() {
		fetchPaths(t, cli, "early", 0, 20)
		sent = true
	}, "tcp", "port", "8080")
	if capt.creating == "" || !strings.Contains(capt.creating, state) || !sent {
		t.Fatalf("capture on a new state did not say it creates it: it said %q first", capt.started)
	}
	capt.waitLines(20)
	summary := capt.stop(t)
	got := capt.lines()
	slices.Sort(got)
	want := paths("early", 0, 20)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("requests sent while the state was created: %d of 20 recorded: %q\n%s", len(got), got, summary)
	}
}

// capture without CAP_NET_RAW says what it needs, and creates nothing.
func TestCaptureWithoutPrivilege(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatal("setpriv (util-linux) is needed: ", err)
	}
	state := filepath.Join(t.TempDir(), "state")
	cmd := exec.Command("setpriv", "--bounding-set", "-net_raw,-net_admin", "--inh-caps", "-all",
		binary, "--dir", state, "capture", "-i", "lo")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("capture without CAP_NET_RAW: %v %s; want exit 1", err, out)
	}
	for _, want := range []string{"CAP_NET_RAW", "setcap cap_net_raw,cap_net_admin+ep", "root"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("capture without CAP_NET_RAW said %q; want it to say %q", out, want)
		}
	}
	if _, err := os.Lstat(state); err == nil {
		t.Error("capture without CAP_NET_RAW created the state")
	}
}

// serve makes the socket's directory (0755) when it is missing, and takes
// --socket-mode in octal; --help shows it in octal.
func TestServeSocketDirAndMode(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	sock := filepath.Join(tmp, "run", "urldedupd", "api.sock")
	cmd, _ := serve(t, filepath.Join(tmp, "state"), "--socket", sock, "--socket-mode", "0640")
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{filepath.Dir(sock), os.ModeDir | 0o755}, {filepath.Dir(filepath.Dir(sock)), os.ModeDir | 0o755}, {sock, os.ModeSocket | 0o640}} {
		fi, err := os.Lstat(c.path)
		if err != nil || fi.Mode() != c.mode {
			t.Errorf("%s: %v %v; want %v", c.path, fi.Mode(), err, c.mode)
		}
	}
	if code, body := post(t, unixClient(sock), "/v1/check", "http://socket.example/\n"); code != 200 || !strings.HasPrefix(body, "new") {
		t.Errorf("the API on the socket answered %d %q", code, body)
	}
	stopServe(t, cmd)

	out, _, _ := run(t, nil, "serve", "--help")
	if !strings.Contains(out, "(default 0660)") {
		t.Errorf("serve --help does not show --socket-mode's default in octal:\n%s", out)
	}
	for _, bad := range []string{"999", "0x1b0", "1777", "rw"} {
		dir := filepath.Join(t.TempDir(), "state")
		_, stderr, code := run(t, nil, "--dir", dir, "serve", "--socket-mode", bad)
		if code != 2 || !strings.Contains(stderr, "--socket-mode") || !strings.Contains(stderr, "octal") {
			t.Errorf("--socket-mode %s: exit %d %q; want 2 saying octal", bad, code, stderr)
		}
	}
}

// serve with nothing to serve is refused before anything is made.
func TestServeNothingToServe(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	_, stderr, code := run(t, nil, "--dir", dir, "serve", "--socket", "none")
	if code != 2 || !strings.Contains(stderr, "nothing to serve") {
		t.Errorf("serve --socket none: exit %d %q; want 2, nothing to serve", code, stderr)
	}
	if _, err := os.Lstat(dir); err == nil {
		t.Error("serve with nothing to serve created the state")
	}
	// With a listener it serves.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(binary, "--dir", dir, "serve", "--socket", "none", "--listen", addr, "--log-format", "json")
	var logs lockedBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	waitDial(t, "tcp", addr, 30*time.Second, "serve --socket none --listen did not listen")
	stopServe(t, cmd)
	// Creating the state takes seconds, before anything listens: it is said.
	if !strings.Contains(logs.String(), `"msg":"creating state"`) {
		t.Errorf("serve on a new state did not say it creates it:\n%s", logs.String())
	}
}

// init names what is wrong with a size and what would do (it said
// "unknown state layout" of a layout it knows).
func TestInitSizeSaysWhatWouldDo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--layout", "keyed", "--size", "3GiB"}, []string{"3GiB is not a power of two", "512MiB to 256GiB", "2GiB or 4GiB"}},
		{[]string{"--layout", "keyed", "--size", "1MiB"}, []string{"1MiB is out of range", "512MiB to 256GiB"}},
		{[]string{"--layout", "bloom", "--size", "100MiB"}, []string{"100MiB is not a power of two", "64MiB or 128MiB"}},
		{[]string{"--layout", "bitmap", "--size", "1GiB"}, []string{"layout bitmap is always 512MiB"}},
		{[]string{"--layout", "keyed-window", "--window", "7d", "--size", "3GiB"}, []string{"3GiB is not a power of two", "2GiB or 4GiB"}},
	} {
		dir := filepath.Join(t.TempDir(), "state")
		_, stderr, code := run(t, nil, append([]string{"--dir", dir, "init"}, c.args...)...)
		if code != 2 || strings.Contains(stderr, "unknown state layout") {
			t.Errorf("init %v: exit %d %q; want 2, not an unknown layout", c.args, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("init %v said %q; want %q in it", c.args, stderr, w)
			}
		}
		if _, err := os.Lstat(dir); err == nil {
			t.Errorf("init %v created %s", c.args, dir)
		}
	}
}

// filter names an unreadable file once.
func TestFilterDirectoryArgument(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	arg := filepath.Join(tmp, "urls.d")
	os.Mkdir(arg, 0o755)
	_, stderr, code := run(t, nil, "--dir", filepath.Join(tmp, "state"), "filter", arg)
	if code != 1 || strings.Count(stderr, arg) != 1 || !strings.Contains(stderr, "is a directory") {
		t.Errorf("filter DIR: exit %d %q; want 1 naming %s once", code, stderr, arg)
	}
}

// A state is created only in an absent or empty directory (lost+found and
// a stale socket aside), or opened in one that holds a state: a mistyped
// --dir ~ filled a home directory with 256 shard files.
func TestStateOnlyInEmptyDirectory(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, f := range []string{".bashrc", "notes.txt", "Documents"} {
		os.WriteFile(filepath.Join(home, f), []byte("mine\n"), 0o644)
	}
	// check opens read-only: it answers from no state and creates none.
	for _, args := range [][]string{{"filter"}, {"init"}, {"check", "http://x/"}} {
		stdout, stderr, code := run(t, strings.NewReader("http://home.example/\n"), append([]string{"--dir", home}, args...)...)
		if args[0] != "check" && (code != 3 || !strings.Contains(stderr, home) || !strings.Contains(stderr, ".bashrc") || !strings.Contains(stderr, "not empty")) {
			t.Errorf("%s in a home directory: exit %d %q %q; want 3 naming what is there", args[0], code, stdout, stderr)
		}
		ents, _ := os.ReadDir(home)
		if len(ents) != 3 {
			t.Fatalf("%s in a home directory left %d entries there", args[0], len(ents))
		}
	}
	// An empty directory, one with lost+found and a stale socket, and one
	// holding a state are all fine.
	empty, mount := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(mount, "lost+found"), 0o700)
	if l, err := net.Listen("unix", filepath.Join(mount, "api.sock")); err == nil {
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close()
	}
	for _, dir := range []string{empty, mount, mount} {
		out, stderr, code := run(t, strings.NewReader("http://empty.example/\n"), "--dir", dir, "filter", "--mark")
		if code != 0 {
			t.Fatalf("filter in %s: exit %d %q", dir, code, stderr)
		}
		if _, err := os.Lstat(filepath.Join(dir, "00")); err != nil {
			t.Errorf("filter in %s: %q, no state made", dir, out)
		}
	}
}

// A binary built without -ldflags (go install, go build) names its version
// from the build information, not "dev", and version prints the toolchain
// and the build settings. GOFLAGS may turn version control stamping off
// (-buildvcs=false); the build here asks for it, as go install does by
// default.
func TestVersionFromBuildInfo(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "urldedupd")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse (the tests run in a git checkout): %v", err)
	}
	tags, _ := exec.Command("git", "tag", "--points-at", "HEAD").Output()
	head := strings.TrimSpace(string(rev))
	out, err := exec.Command(bin, "--version").Output()
	line := strings.TrimSpace(string(out))
	v, _ := strings.CutPrefix(line, "urldedupd version ")
	if err != nil || v == "dev" || !strings.Contains(v, head[:12]) && !slices.Contains(strings.Fields(string(tags)), v) {
		t.Errorf("--version: %q %v; want the revision %s or a tag of it (%q)", line, err, head[:12], tags)
	}
	out, err = exec.Command(bin, "version").Output()
	for _, want := range []string{"urldedupd " + v + "\n", "go        go1.", "build     vcs.revision=" + head, "build     GOOS=linux"} {
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("version printed %q (%v); want %q in it", out, err, want)
		}
	}
}

// The --json summary counts a frame once (QUIC frames were counted as
// other frames too, "other:ipproto:17"), and counters by reason or group
// are objects: no key needs quoting in jq.
func TestJSONSummaryNestedCountedOnce(t *testing.T) {
	t.Parallel()
	_, stderr, code := run(t, nil, "--dir", filepath.Join(t.TempDir(), "state"), "replay", "--json", "-o", os.DevNull, "../../internal/quic/testdata/quicgo-v1.pcap")
	var sum map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(stderr)), &sum); code != 0 || err != nil {
		t.Fatalf("replay --json: exit %d %v %q", code, err, stderr)
	}
	for k := range sum {
		if strings.Contains(k, ":") {
			t.Errorf("summary key %q needs quoting in jq", k)
		}
	}
	records, _ := sum["records"].(map[string]any)
	other, _ := sum["other"].(map[string]any)
	undecoded, _ := sum["undecoded"].(map[string]any)
	if sum["packets"] != 4.0 || sum["quic_frames"] != 4.0 || sum["other_frames"] != 0.0 || len(other) != 0 || undecoded == nil || len(undecoded) != 0 ||
		records["quic"] != 1.0 || records["http"] != 0.0 {
		t.Errorf("summary of 4 QUIC frames: %s", stderr)
	}
	// Frames of other protocols are counted by reason, in "other".
	_, stderr, code = run(t, nil, "--dir", filepath.Join(t.TempDir(), "state"), "replay", "--json", "--proto", "http", "-o", os.DevNull, "../../internal/quic/testdata/quicgo-v1.pcap")
	sum = nil
	if err := json.Unmarshal([]byte(strings.TrimSpace(stderr)), &sum); code != 0 || err != nil {
		t.Fatalf("replay --json --proto http: exit %d %v %q", code, err, stderr)
	}
	if other, _ := sum["other"].(map[string]any); sum["other_frames"] != 4.0 || sum["quic_frames"] != 0.0 || other["ipproto:17"] != 4.0 {
		t.Errorf("summary of 4 UDP frames, QUIC not read: %s", stderr)
	}
}

// The help says what the commands do today: every layout this build knows
// is named by the root help and init's --layout, and replay and capture
// name every protocol they record (they said "every HTTP/1.x request").
func TestHelpNamesLayoutsAndProtocols(t *testing.T) {
	t.Parallel()
	_, stderr, _ := run(t, nil, "--dir", filepath.Join(t.TempDir(), "state"), "init", "--layout", "nosuch")
	_, known, ok := strings.Cut(stderr, "this build knows ")
	if !ok {
		t.Fatalf("init --layout nosuch does not list the layouts: %q", stderr)
	}
	known, _, _ = strings.Cut(known, ")")
	layouts := strings.FieldsFunc(strings.ReplaceAll(known, " and ", ","), func(r rune) bool { return r == ',' || r == ' ' })
	if len(layouts) < 7 {
		t.Fatalf("layouts %q", layouts)
	}
	root, _, _ := run(t, nil, "--help")
	initHelp, _, _ := run(t, nil, "init", "--help")
	for _, l := range layouts {
		for name, help := range map[string]string{"urldedupd --help": root, "init --help": initHelp} {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(l) + `\b`).MatchString(help) {
				t.Errorf("%s does not name the layout %s", name, l)
			}
		}
	}
	for _, cmd := range []string{"replay", "capture"} {
		help, _, _ := run(t, nil, cmd, "--help")
		first, _, _ := strings.Cut(help, "\n\n")
		for _, p := range []string{"HTTP/1.x", "TLS", "QUIC", "HTTP/2"} {
			if !strings.Contains(first, p) {
				t.Errorf("%s --help's first paragraph does not name %s:\n%s", cmd, p, first)
			}
		}
	}
}
