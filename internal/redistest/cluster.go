package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of three masters, each with one replica,
// started by StartCluster.
type Cluster struct {
	Masters  []string // host:port of the three masters
	Replicas []string // host:port of the three replicas
	procs    map[string]*Proc
}

// StartCluster starts six redis-server processes in cluster mode (AOF on,
// --cluster-node-timeout nodeTimeout), joins them with redis-cli --cluster
// create (one replica per master), and waits, with bounds, until the
// cluster is ok and every replica is in sync. Every process is killed by
// pid when the test ends.
func StartCluster(tb testing.TB, nodeTimeout time.Duration) *Cluster {
	tb.Helper()
	c := &Cluster{procs: map[string]*Proc{}}
	var addrs []string
	for i := range 6 {
		dir := filepath.Join(tb.TempDir(), fmt.Sprint("node", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		p := Start(tb, dir, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", fmt.Sprint(nodeTimeout.Milliseconds()), "--appendonly", "yes")
		addrs = append(addrs, p.Addr)
		c.procs[p.Addr] = p
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	waitFor(tb, 60*time.Second, "the cluster to be ok", func() (bool, string) {
		out, _ := cli(addrs[0], "cluster", "info")
		return strings.Contains(out, "cluster_state:ok"), out
	})
	// redis-cli --cluster create makes the first three nodes masters.
	c.Masters, c.Replicas = addrs[:3], addrs[3:]
	for _, m := range c.Masters {
		waitFor(tb, 60*time.Second, "the replica of "+m+" to be in sync", func() (bool, string) {
			out, _ := cli(m, "info", "replication")
			return strings.Contains(out, "role:master") && strings.Contains(out, "state=online"), out
		})
	}
	return c
}

// Kill kills the node at addr (SIGKILL) and waits for it to exit.
func (c *Cluster) Kill(addr string) { c.procs[addr].Kill() }

// cli runs redis-cli against the node at addr.
func cli(addr string, args ...string) (string, error) {
	host, port, _ := strings.Cut(addr, ":")
	out, err := exec.Command("redis-cli", append([]string{"-h", host, "-p", port}, args...)...).Output()
	return string(out), err
}

// waitFor polls ok every 100 ms until it holds, and fails the test with
// its last output after limit.
func waitFor(tb testing.TB, limit time.Duration, what string, ok func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for {
		done, out := ok()
		if done {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("waited %v for %s:\n%s", limit, what, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
