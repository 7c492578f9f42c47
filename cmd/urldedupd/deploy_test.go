package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The systemd unit passes systemd-analyze verify (with ExecStart pointing
// at the binary under test), and the logrotate snippet parses.
func TestDeployFiles(t *testing.T) {
	t.Parallel()
	unit, err := os.ReadFile("../../scripts/deploy/urldedupd.service")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN") ||
		!strings.Contains(string(unit), "ProtectSystem=strict") || !strings.Contains(string(unit), "NoNewPrivileges=yes") {
		t.Fatal("unit lacks its capabilities or hardening")
	}
	tmp := t.TempDir()
	p := filepath.Join(tmp, "urldedupd.service")
	os.WriteFile(p, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/urldedupd", binary)), 0o644)
	if out, err := exec.Command("systemd-analyze", "verify", p).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The service's user exists only where it is installed: root stands in.
	lr, err := os.ReadFile("../../scripts/deploy/urldedupd.logrotate")
	if err != nil {
		t.Fatal(err)
	}
	lrPath := filepath.Join(tmp, "urldedupd.logrotate")
	os.WriteFile(lrPath, []byte(strings.ReplaceAll(string(lr), "urldedupd urldedupd", "root root")), 0o644)
	out, err := exec.Command("logrotate", "-d", "-s", filepath.Join(tmp, "state"), lrPath).CombinedOutput()
	if err != nil || strings.Contains(string(out), "error:") || !strings.Contains(string(out), "events.jsonl") {
		t.Fatalf("logrotate -d: %v\n%s", err, out)
	}
}
