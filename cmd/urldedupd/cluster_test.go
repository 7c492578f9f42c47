package main_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// redisCluster starts 6 redis-server processes in cluster mode on free
// loopback ports and joins them with redis-cli --cluster create into 3
// masters with one replica each. Every process is stopped by pid at the
// end. It returns the masters' addresses.
func redisCluster(t *testing.T) []string {
	t.Helper()
	var addrs []string
	for i := 0; i < 6; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		dir := filepath.Join(t.TempDir(), fmt.Sprint(port))
		os.MkdirAll(dir, 0o755)
		cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--dir", dir,
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
			"--appendonly", "yes", "--save", "", "--protected-mode", "no")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", port))
	}
	for _, a := range addrs {
		_, port, _ := net.SplitHostPort(a)
		for i := 0; ; i++ {
			if out, _ := exec.Command("redis-cli", "-p", port, "ping").Output(); strings.TrimSpace(string(out)) == "PONG" {
				break
			}
			if i == 100 {
				t.Fatalf("redis-server %s did not start", a)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	_, port, _ := net.SplitHostPort(addrs[0])
	for i := 0; ; i++ { // bounded wait for the cluster to agree
		out, _ := exec.Command("redis-cli", "-p", port, "cluster", "info").Output()
		if strings.Contains(string(out), "cluster_state:ok") {
			break
		}
		if i == 200 {
			t.Fatalf("cluster not ok:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return addrs[:3]
}

// Exactly once across 4 filter processes against a Redis Cluster of 3
// masters with replicas; the 256 keys spread over all three masters.
func TestRedisClusterExactlyOnce(t *testing.T) {
	masters := redisCluster(t)
	backend := "redis-cluster://" + strings.Join(masters, ",")
	if _, stderr, code := run(t, nil, "--backend", backend, "init"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	n := filterExactlyOnce(t, 100_000, 30_000, "--backend", backend)
	out, stderr, code := run(t, nil, "--backend", backend, "stats", "--json")
	if code != 0 || !strings.Contains(out, fmt.Sprintf(`"bits_set": %d,`, n)) {
		t.Fatalf("stats: %d %q", code, stderr)
	}
	// Every master holds some of the keys.
	for _, m := range masters {
		_, port, _ := net.SplitHostPort(m)
		keys, err := exec.Command("redis-cli", "-p", port, "--scan", "--pattern", "urldedupd:*").Output()
		if err != nil || strings.Count(string(keys), "\n") < 40 {
			t.Fatalf("master %s holds %d keys: %v", m, strings.Count(string(keys), "\n"), err)
		}
	}
	t.Logf("%d distinct signatures over a 3-master cluster, each printed once", n)
}
