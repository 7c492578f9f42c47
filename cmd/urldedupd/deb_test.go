package main_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The Debian package (make deb) installs with dpkg -i on this machine: the
// binary runs, the installed unit passes systemd-analyze verify and scores
// at most 2.0 in systemd-analyze security, the service user may create its
// state; dpkg -r leaves the state and dpkg --purge removes it and the user.
func TestDebianPackage(t *testing.T) {
	t.Parallel()
	if out, err := exec.Command("dpkg-query", "-W", "-f", "${Status}", "urldedupd").Output(); err == nil && strings.Contains(string(out), "installed") {
		t.Fatal("a urldedupd package is installed on this machine already: this test installs and purges its own, so remove that one first")
	}
	for _, p := range []string{"/var/lib/urldedupd", "/var/log/urldedupd", "/usr/bin/urldedupd"} {
		if _, err := os.Lstat(p); err == nil {
			t.Fatalf("%s exists, and purging the test's package would remove it: move it aside first", p)
		}
	}
	mk := exec.Command("bash", "../../scripts/make-deb.sh", t.TempDir())
	// the binary under test; gzip, not xz, which takes 11 s of CPU
	mk.Env = append(os.Environ(), "BIN="+binary, "DEB_COMPRESSION=gzip")
	out, err := mk.CombinedOutput()
	if err != nil {
		t.Fatalf("make-deb.sh: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	deb := lines[len(lines)-1]
	if !strings.HasSuffix(deb, ".deb") {
		t.Fatalf("make-deb.sh printed %q, not a package", out)
	}
	dpkg := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("dpkg", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("dpkg %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { exec.Command("dpkg", "--purge", "urldedupd").Run() })
	dpkg("-i", deb)

	if out, err := exec.Command("/usr/bin/urldedupd", "version").Output(); err != nil || !strings.HasPrefix(string(out), "urldedupd ") || !strings.Contains(string(out), "go        go1.") {
		t.Errorf("urldedupd version: %v %q", err, out)
	}
	unit := "/lib/systemd/system/urldedupd.service"
	if out, err := exec.Command("systemd-analyze", "verify", unit).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", unit, err, out)
	}
	out, err = exec.Command("systemd-analyze", "security", "--offline=true", unit).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for urldedupd\.service: ([0-9.]+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	if score, _ := strconv.ParseFloat(string(m[1]), 64); score > 2.0 {
		t.Errorf("systemd-analyze security: exposure %.1f, want at most 2.0\n%s", score, out)
	}
	fi, err := os.Stat("/var/lib/urldedupd")
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
		t.Fatalf("state directory: %v %v, want a directory of mode 0750", fi, err)
	}
	if st := fi.Sys().(*syscall.Stat_t); lookupUID(t, "urldedupd") != st.Uid {
		t.Fatalf("the state directory is not the urldedupd user's (uid %d)", st.Uid)
	}
	// The service user creates its state there, as the daemon would.
	cmd := exec.Command("runuser", "-u", "urldedupd", "--", "/usr/bin/urldedupd", "-d", "/var/lib/urldedupd", "filter")
	cmd.Stdin = strings.NewReader("http://package.example/\n")
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "http://package.example/\n" {
		t.Fatalf("filter as urldedupd in /var/lib/urldedupd: %v %q", err, out)
	}

	dpkg("-r", "urldedupd")
	if _, err := os.Stat("/usr/bin/urldedupd"); err == nil {
		t.Error("dpkg -r left /usr/bin/urldedupd")
	}
	if _, err := os.Stat("/var/lib/urldedupd/urldedupd.meta"); err != nil {
		t.Errorf("dpkg -r took the state: %v", err)
	}
	dpkg("--purge", "urldedupd")
	if _, err := os.Lstat("/var/lib/urldedupd"); err == nil {
		t.Error("dpkg --purge left /var/lib/urldedupd")
	}
	if exec.Command("id", "urldedupd").Run() == nil {
		t.Error("dpkg --purge left the urldedupd user")
	}
}

func lookupUID(t *testing.T, name string) uint32 {
	out, err := exec.Command("id", "-u", name).Output()
	if err != nil {
		t.Fatalf("id -u %s: %v", name, err)
	}
	uid, _ := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 32)
	return uint32(uid)
}

// Every system call serve makes (capture with a BPF filter compiled by
// tcpdump, the API, SIGTERM) is one the unit's SystemCallFilter allows: a
// call outside it would fail with EPERM under systemd. strace records
// them; systemd-analyze expands the unit's groups.
func TestUnitSystemCallFilter(t *testing.T) {
	t.Parallel()
	unit, err := os.ReadFile("../../scripts/deploy/urldedupd.service")
	if err != nil {
		t.Fatal(err)
	}
	allowed, denied := map[string]bool{}, map[string]bool{}
	groups := syscallGroups(t)
	for _, l := range strings.Split(string(unit), "\n") {
		v, ok := strings.CutPrefix(l, "SystemCallFilter=")
		if !ok {
			continue
		}
		set := allowed
		if v, ok = strings.CutPrefix(v, "~"); ok {
			set = denied
		}
		for _, f := range strings.Fields(v) {
			for _, c := range expandSyscalls(groups, f) {
				set[c] = true
			}
		}
	}
	if len(allowed) == 0 || len(denied) == 0 {
		t.Fatalf("the unit's filter allows %d and denies %d system calls", len(allowed), len(denied))
	}

	tmp := t.TempDir()
	sock, trace := filepath.Join(tmp, "api.sock"), filepath.Join(tmp, "strace")
	cmd := exec.Command("strace", "-f", "-qq", "-o", trace, binary, "--dir", filepath.Join(tmp, "state"), "serve",
		"--socket", sock, "--iface", "lo", "--bpf", "tcp port 9", "--events", filepath.Join(tmp, "events.jsonl"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	waitDial(t, "unix", sock, 60*time.Second, "serve under strace did not open its socket")
	c := unixClient(sock)
	if code, body := post(t, c, "/v1/check", "http://filter.example/\n"); code != 200 || !strings.HasPrefix(body, "new") {
		t.Errorf("check: %d %q", code, body)
	}
	if resp, err := c.Get("http://urldedupd/metrics"); err != nil || resp.StatusCode != 200 {
		t.Errorf("metrics: %v", err)
	} else {
		resp.Body.Close()
	}
	// SIGTERM to serve itself (strace passes nothing on).
	out, _ := exec.Command("pgrep", "-P", strconv.Itoa(cmd.Process.Pid)).Output()
	pid, _ := strconv.Atoi(strings.Fields(string(out) + " 0")[0])
	if pid == 0 {
		t.Fatalf("serve's pid under strace not found")
	}
	syscall.Kill(pid, syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve under strace: %v", err)
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	name := regexp.MustCompile(`^\d+\s+(?:<\.\.\. )?([a-z_0-9]+)[( ]`)
	used := map[string]bool{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if m := name.FindStringSubmatch(sc.Text()); m != nil && m[1] != "exited" && m[1] != "killed" {
			used[m[1]] = true
		}
	}
	if len(used) < 20 {
		t.Fatalf("strace recorded %d system calls: %v", len(used), used)
	}
	for c := range used {
		if !allowed[c] || denied[c] {
			t.Errorf("serve calls %s, which the unit's SystemCallFilter refuses (allowed %v, denied %v)", c, allowed[c], denied[c])
		}
	}
}

// syscallGroups reads systemd's system call groups (@system-service ...):
// names, and groups nested in them.
func syscallGroups(t *testing.T) map[string][]string {
	out, err := exec.Command("systemd-analyze", "syscall-filter").Output()
	if err != nil {
		t.Fatalf("systemd-analyze syscall-filter: %v", err)
	}
	groups, cur := map[string][]string{}, ""
	for _, l := range strings.Split(string(out), "\n") {
		s := strings.TrimSpace(l)
		switch {
		case s == "" || strings.HasPrefix(s, "#"):
		case strings.HasPrefix(l, "@"):
			cur = s
		case cur != "":
			groups[cur] = append(groups[cur], s)
		}
	}
	return groups
}

func expandSyscalls(groups map[string][]string, f string) []string {
	if !strings.HasPrefix(f, "@") {
		return []string{f}
	}
	var out []string
	for _, x := range groups[f] {
		out = append(out, expandSyscalls(groups, x)...)
	}
	return out
}
