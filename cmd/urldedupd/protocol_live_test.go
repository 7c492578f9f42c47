package main_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// protocolNet is the protocol's system as processes: two networks, each a
// network namespace, joined by a veth; in each, a centre and two hosts,
// each node an address on the namespace's end of the veth with its own
// redis-server, and a urldedupd protocol process (a host's finish_URL a
// bloom state directory).
type protocolNet struct {
	t     *testing.T
	ns    [2]string
	nodes map[string]int // address → network index
	top   string         // the topology file
	procs map[string]*exec.Cmd
	errs  map[string]*bytes.Buffer
	logs  []string // the redis-servers' logs
}

func protocolAddr(net, node int) string { return fmt.Sprintf("10.%d.0.%d", net+1, node+1) }

func newProtocolNet(t *testing.T) *protocolNet {
	t.Helper()
	p := &protocolNet{t: t, nodes: map[string]int{}, procs: map[string]*exec.Cmd{}, errs: map[string]*bytes.Buffer{}}
	p.ns[0], p.ns[1] = nettest.Namespace(t), nettest.Namespace(t)
	a, b := nettest.Link(t, p.ns[0], p.ns[1], 0)
	devs := [2]string{a, b}
	var nets []string
	for i := range 2 {
		var hosts []string
		for j := range 3 {
			ip := protocolAddr(i, j)
			p.nodes[ip] = i
			nettest.Addr(t, p.ns[i], devs[i], ip+"/8")
			node := fmt.Sprintf(`{"ip":%q,"redis":"redis://%s:6379/0"}`, ip, ip)
			if j > 0 {
				hosts = append(hosts, node)
			}
		}
		nets = append(nets, fmt.Sprintf(`{"name":"n%d","centre":{"ip":%q,"redis":"redis://%s:6379/0"},"hosts":[%s]}`,
			i+1, protocolAddr(i, 0), protocolAddr(i, 0), strings.Join(hosts, ",")))
	}
	for ip, i := range p.nodes {
		dir := t.TempDir()
		cmd := nettest.Command(p.ns[i], "redis-server", "--bind", ip, "--port", "6379", "--save", "",
			"--appendonly", "no", "--protected-mode", "no", "--dir", dir, "--logfile", filepath.Join(dir, "log"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		p.logs = append(p.logs, filepath.Join(dir, "log"))
	}
	for ip := range p.nodes {
		p.waitRedis(ip)
	}
	p.top = filepath.Join(t.TempDir(), "net.json")
	top := fmt.Sprintf(`{"deadline":"20s","networks":[%s]}`, strings.Join(nets, ","))
	if err := os.WriteFile(p.top, []byte(top), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitRedis waits, bounded, until the redis-server at ip answers.
func (p *protocolNet) waitRedis(ip string) {
	p.t.Helper()
	for i := 0; ; i++ {
		if out, _ := p.cli(ip, "PING"); out == "PONG" {
			return
		}
		if i == 300 {
			for _, l := range p.logs {
				b, _ := os.ReadFile(l)
				p.t.Logf("%s:\n%s", l, b)
			}
			p.t.Fatalf("redis-server at %s does not answer", ip)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cli runs redis-cli against the node at ip, in its namespace.
func (p *protocolNet) cli(ip string, args ...string) (string, error) {
	out, err := nettest.Command(p.ns[p.nodes[ip]], append([]string{"redis-cli", "-h", ip, "--raw"}, args...)...).Output()
	return strings.TrimSpace(string(out)), err
}

// startAll starts every node; each is killed, by pid, when the test ends.
func (p *protocolNet) startAll() {
	for ip := range p.nodes {
		cmd := nettest.Command(p.ns[p.nodes[ip]], p.nodeArgs(ip)...)
		var e bytes.Buffer
		cmd.Stderr = &e
		if err := cmd.Start(); err != nil {
			p.t.Fatal(err)
		}
		p.t.Cleanup(func() {
			syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		})
		p.procs[ip], p.errs[ip] = cmd, &e
	}
}

func (p *protocolNet) nodeArgs(ip string) []string {
	p.t.Helper()
	args := []string{binary}
	role := "centre"
	if !strings.HasSuffix(ip, ".1") {
		role = "host"
		dir := filepath.Join(p.t.TempDir(), "finish")
		if _, stderr, code := run(p.t, nil, "-d", dir, "init", "--layout", "bloom", "--size", "1MiB"); code != 0 {
			p.t.Fatalf("init: %s", stderr)
		}
		args = append(args, "-d", dir)
	}
	return append(args, "protocol", role, "--topology", p.top, "--ip", ip)
}

// hosts are the hosts' addresses.
func (p *protocolNet) hosts() []string {
	var hs []string
	for ip := range p.nodes {
		if !strings.HasSuffix(ip, ".1") {
			hs = append(hs, ip)
		}
	}
	return hs
}

// tasks returns every URL in every host's task_pool, with how many times.
func (p *protocolNet) tasks() map[string]int {
	p.t.Helper()
	got := map[string]int{}
	for _, ip := range p.hosts() {
		for u, n := range p.pool(ip) {
			got[u] += n
		}
	}
	return got
}

// pool returns the URLs in the task_pool of the host at ip, with how
// many times.
func (p *protocolNet) pool(ip string) map[string]int {
	p.t.Helper()
	out, err := p.cli(ip, "XRANGE", "dedup:task_pool", "-", "+")
	if err != nil {
		p.t.Fatalf("XRANGE at %s: %v", ip, err)
	}
	// --raw prints each entry as its ID and its field-value pairs, a line
	// each; the URL follows the field "url".
	got := map[string]int{}
	lines := strings.Split(out, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if lines[i] == "url" {
			got[lines[i+1]]++
			i++
		}
	}
	return got
}

// settle waits, bounded, until the task pools hold want URLs and nothing
// more comes for a second.
func (p *protocolNet) settle(want int) map[string]int {
	p.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var got map[string]int
	stable := 0
	for stable < 5 {
		got = p.tasks()
		n := 0
		for _, c := range got {
			n += c
		}
		if n >= want {
			stable++
		} else {
			stable = 0
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("task pools hold %d URLs, want %d, after 90 s", n, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return got
}

// The protocol end to end as processes on real Redis servers in two
// network namespaces: URLs extracted by hosts of both networks, submitted
// one host after another, each reach exactly one task pool; a crawler
// killed after claiming URLs loses none of them; SIGTERM stops every node
// cleanly, with its counts.
func TestProtocolLive(t *testing.T) {
	t.Parallel()
	p := newProtocolNet(t)
	p.startAll()
	urls := func(from, to int) []string {
		var us []string
		for i := from; i < to; i++ {
			us = append(us, fmt.Sprintf("http://crawl.example/%d", i))
		}
		return us
	}
	want := map[string]bool{}
	rounds := []struct {
		host string
		urls []string
	}{
		{protocolAddr(0, 1), urls(0, 60)},
		{protocolAddr(1, 1), urls(30, 90)},  // half seen in the other network
		{protocolAddr(0, 2), urls(60, 120)}, // half seen in the other network, handed to either
		{protocolAddr(1, 2), urls(0, 120)},  // all seen
	}
	for _, r := range rounds {
		if _, err := p.cli(r.host, append([]string{"RPUSH", "dedup:URL_pool"}, r.urls...)...); err != nil {
			t.Fatal(err)
		}
		for _, u := range r.urls {
			want[u] = true
		}
		got := p.settle(len(want))
		lost, twice := lostTwice(want, got)
		if lost != 0 || twice != 0 || len(got) != len(want) {
			t.Fatalf("after %s's URLs: %d lost, %d handed out twice, %d URLs in task pools for %d extracted",
				r.host, lost, twice, len(got), len(want))
		}
	}

	// A crawler claims URLs of a task pool and is killed; another
	// crawler is handed them again. The pool is the fullest host's: which
	// host of a network takes a URL its centre hands out is a race.
	var h string
	var ns int
	pool := map[string]bool{}
	for net := range 2 {
		for node := 1; node <= 2; node++ {
			if c := p.pool(protocolAddr(net, node)); len(c) > len(pool) {
				h, ns, pool = protocolAddr(net, node), net, map[string]bool{}
				for u := range c {
					pool[u] = true
				}
			}
		}
	}
	redisURL := "redis://" + h + ":6379/0"
	if len(pool) < 10 {
		t.Fatalf("the fullest task pool (host %s) holds %d URLs: too few to test", h, len(pool))
	}
	first := nettest.Command(p.ns[ns], binary, "protocol", "take", "--redis", redisURL, "--consumer", "c1",
		"--count", "5", "--follow", "--wait", "100ms")
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(first.Process.Pid, syscall.SIGKILL); first.Wait() })
	sc := bufio.NewScanner(stdout)
	claimed := map[string]bool{}
	for len(claimed) < 5 && sc.Scan() {
		_, u, _ := strings.Cut(sc.Text(), "\t")
		claimed[u] = true
	}
	if len(claimed) < 5 {
		t.Fatalf("the first crawler claimed %d URLs", len(claimed))
	}
	syscall.Kill(first.Process.Pid, syscall.SIGKILL) // ip netns exec execs take: the pid is take's
	first.Wait()
	taken := map[string]int{}
	for i := 0; len(taken) < len(pool); i++ {
		if i == 100 {
			break
		}
		out, err := nettest.Command(p.ns[ns], binary, "protocol", "take", "--redis", redisURL, "--consumer", "c2",
			"--count", "1000", "--idle", "300ms", "--wait", "100ms", "--ack").Output()
		if err != nil {
			t.Fatalf("take: %v", err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if _, u, ok := strings.Cut(line, "\t"); ok {
				taken[u]++
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	lost, twice := lostTwice(pool, taken)
	for u := range claimed {
		if taken[u] != 1 {
			t.Errorf("%s, claimed by the killed crawler, was handed to the other %d times", u, taken[u])
		}
	}
	if lost != 0 || twice != 0 {
		t.Errorf("of %d URLs in the task pool: %d never handed to the second crawler, %d handed to it twice", len(pool), lost, twice)
	}
	if pending, _ := p.cli(h, "XPENDING", "dedup:task_pool", "crawlers"); !strings.HasPrefix(pending, "0") {
		t.Errorf("entries left pending after every URL was acknowledged: %s", pending)
	}

	// SIGTERM: every node stops, exit 0, and says what it did.
	for ip, cmd := range p.procs {
		syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v: %s", ip, err, p.errs[ip])
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not stop within 30 s of SIGTERM", ip)
		}
		want := "urls_handed_out\t"
		if !strings.HasSuffix(ip, ".1") {
			want = "urls_taken\t"
		}
		if !strings.Contains(p.errs[ip].String(), want) {
			t.Errorf("%s printed no %q at exit: %s", ip, want, p.errs[ip])
		}
		if strings.Contains(p.errs[ip].String(), "deadline") {
			t.Errorf("%s: %s", ip, p.errs[ip])
		}
	}
}

// A node without its topology, or at an address the topology does not
// give it, is a usage error (exit 2) that says so.
func TestProtocolUsage(t *testing.T) {
	t.Parallel()
	top := filepath.Join(t.TempDir(), "net.json")
	os.WriteFile(top, []byte(`{"networks":[{"name":"n1","centre":{"ip":"10.0.0.1","redis":"redis://127.0.0.1:1/0"},"hosts":[{"ip":"10.0.0.2","redis":"redis://127.0.0.1:1/0"}]}]}`), 0o644)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"networks":[]}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"protocol", "centre", "--ip", "10.0.0.1"}, "--topology and --ip are required"},
		{[]string{"protocol", "centre", "--topology", top, "--ip", "10.0.0.2"}, "10.0.0.2 is no centre of the topology"},
		{[]string{"protocol", "centre", "--topology", top, "--ip", "ten"}, "--ip"},
		{[]string{"protocol", "centre", "--topology", bad, "--ip", "10.0.0.1"}, bad + ": dedupproto: bad topology: no networks"},
		{[]string{"protocol", "take", "--redis", "redis://127.0.0.1:1/0"}, "--consumer"},
		{[]string{"protocol", "ack", "1-0"}, "--redis is required"},
	} {
		_, stderr, code := run(t, nil, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 saying %q", c.args, code, stderr, c.want)
		}
	}
}

// lostTwice counts the URLs of want that got holds no time (lost) and
// more than once (twice).
func lostTwice(want map[string]bool, got map[string]int) (lost, twice int) {
	for u := range want {
		switch got[u] {
		case 0:
			lost++
		case 1:
		default:
			twice++
		}
	}
	return lost, twice
}
