package dedupproto_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/dedupproto"
	"github.com/urldedupd/urldedupd/internal/redistest"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// system is the paper's system on one real redis-server: every node's
// Redis is a database of it (a centre and its hosts, network by network),
// every host's finish_URL a bitmap state in memory. Node addresses are
// identities only (10.<network>.0.1 the centre, 10.<network>.0.<2+j> the
// hosts).
type system struct {
	t       testing.TB
	top     *dedupproto.Topology
	db      map[netip.Addr]*redis.Client
	hosts   map[netip.Addr]*dedupproto.Host
	centres map[netip.Addr]*dedupproto.Centre
	extra   []*dedupproto.Centre // centres a test made itself, counted in moves
	stop    []func()
}

func newSystem(t testing.TB, nets, hostsPer int, deadline time.Duration) *system {
	t.Helper()
	if 1+nets*(1+hostsPer) > 16 {
		t.Fatal("more nodes than a redis-server has databases")
	}
	base := strings.TrimSuffix(redistest.Server(t), "/0")
	s := &system{t: t, top: &dedupproto.Topology{Deadline: deadline}, db: map[netip.Addr]*redis.Client{},
		hosts: map[netip.Addr]*dedupproto.Host{}, centres: map[netip.Addr]*dedupproto.Centre{}}
	db := 1
	node := func(ip netip.Addr) dedupproto.Node {
		addr := fmt.Sprintf("%s/%d", base, db)
		db++
		o, _ := redis.ParseURL(addr)
		c := redis.NewClient(o)
		t.Cleanup(func() { c.Close() })
		s.db[ip] = c
		return dedupproto.Node{IP: ip, Redis: addr}
	}
	for i := 1; i <= nets; i++ {
		n := dedupproto.Network{Name: fmt.Sprintf("n%d", i), Centre: node(netip.AddrFrom4([4]byte{10, byte(i), 0, 1}))}
		for j := 0; j < hostsPer; j++ {
			n.Hosts = append(n.Hosts, node(netip.AddrFrom4([4]byte{10, byte(i), 0, byte(2 + j)})))
		}
		s.top.Networks = append(s.top.Networks, n)
	}
	if err := s.top.Check(); err != nil {
		t.Fatal(err)
	}
	logf := func(format string, args ...any) { t.Logf(format, args...) }
	for _, n := range s.top.Networks {
		c, err := dedupproto.NewCentre(s.top, n.Centre.IP, &dedupproto.CentreOptions{Logf: logf})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		s.centres[n.Centre.IP] = c
		for _, hn := range n.Hosts {
			h, err := dedupproto.NewHost(s.top, hn.IP, dedupproto.FinishURL(statetest.Bitmap(t)),
				&dedupproto.HostOptions{Logf: logf})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			s.hosts[hn.IP] = h
		}
	}
	t.Cleanup(s.halt)
	return s
}

// host returns the address of network i's host j (both from 1).
func host(i, j int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i), 0, byte(1 + j)}) }

// centre returns the address of network i's centre.
func centre(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i), 0, 1}) }

// run starts every node but skip, each in its Run loop.
func (s *system) run(skip ...netip.Addr) {
	s.t.Helper()
	for ip, h := range s.hosts {
		if !contains(skip, ip) {
			s.start(h.Run)
		}
	}
	for ip, c := range s.centres {
		if !contains(skip, ip) {
			s.start(c.Run)
		}
	}
}

func (s *system) start(run func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := run(ctx); err != nil {
			s.t.Errorf("run: %v", err)
		}
	}()
	s.stop = append(s.stop, func() { cancel(); wg.Wait() })
}

// halt stops every loop run started, and waits for them.
func (s *system) halt() {
	for _, stop := range s.stop {
		stop()
	}
	s.stop = nil
}

func contains(ips []netip.Addr, ip netip.Addr) bool {
	for _, x := range ips {
		if x == ip {
			return true
		}
	}
	return false
}

// push adds urls to the URL_pool of the host at ip, as its crawler does.
func (s *system) push(ip netip.Addr, urls ...string) {
	s.t.Helper()
	args := make([]any, len(urls))
	for i, u := range urls {
		args[i] = u
	}
	if err := s.db[ip].RPush(context.Background(), "dedup:URL_pool", args...).Err(); err != nil {
		s.t.Fatal(err)
	}
}

// quiet waits, bounded, until nothing is left to do anywhere but at the
// nodes in idle: every URL_pool, inbox and pool empty, every task_URL
// entry read and acknowledged.
func (s *system) quiet(idle ...netip.Addr) {
	s.t.Helper()
	ctx := context.Background()
	busy := func() string {
		for ip, c := range s.db {
			if contains(idle, ip) {
				continue
			}
			for _, k := range []string{"dedup:URL_pool", "dedup:inbox", "dedup:inbox:work"} {
				if n, _ := c.LLen(ctx, k).Result(); n > 0 {
					return fmt.Sprintf("%s %s holds %d", ip, k, n)
				}
			}
			outboxes, _ := c.Keys(ctx, "dedup:outbox:*").Result()
			for _, k := range outboxes {
				if contains(idle, netip.MustParseAddr(strings.TrimPrefix(k, "dedup:outbox:"))) {
					continue // frames for a node that is not running, or not there
				}
				if n, _ := c.LLen(ctx, k).Result(); n > 0 {
					return fmt.Sprintf("%s %s holds %d", ip, k, n)
				}
			}
			for _, k := range []string{"dedup:local_reduce_pool", "dedup:dist_reduce_pool"} {
				if n, _ := c.HLen(ctx, k).Result(); n > 0 {
					return fmt.Sprintf("%s %s holds %d", ip, k, n)
				}
			}
			if _, ok := s.centres[ip]; ok {
				gs, err := c.XInfoGroups(ctx, "dedup:task_URL").Result()
				if err != nil {
					return fmt.Sprintf("%s task_URL: %v", ip, err)
				}
				for _, g := range gs {
					if g.Lag != 0 || g.Pending != 0 {
						return fmt.Sprintf("%s task_URL: lag %d, %d pending", ip, g.Lag, g.Pending)
					}
				}
			}
		}
		return ""
	}
	// A scan is no snapshot: a frame can move from a place not yet
	// looked at to one already looked at. Every move counts at a node,
	// so quiet is two empty scans with no count changed between them.
	deadline := time.Now().Add(60 * time.Second)
	for {
		before := s.moves()
		why := busy()
		if why == "" {
			time.Sleep(50 * time.Millisecond)
			if why = busy(); why == "" && s.moves() == before {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("not quiet after 60 s: %s", why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// moves sums every count of every node.
func (s *system) moves() uint64 {
	var sum uint64
	add := func(_ dedupproto.Counter, v uint64) { sum += v }
	for _, h := range s.hosts {
		h.Stats().Each(add)
	}
	for _, c := range s.centres {
		c.Stats().Each(add)
	}
	for _, c := range s.extra {
		c.Stats().Each(add)
	}
	return sum
}

// tasks returns, for every URL in a host's task_pool, the hosts holding it
// (one entry a time it is there), and the entries.
func (s *system) tasks() (map[string][]netip.Addr, []redis.XMessage) {
	s.t.Helper()
	where := map[string][]netip.Addr{}
	var all []redis.XMessage
	for ip := range s.hosts {
		msgs, err := s.db[ip].XRange(context.Background(), "dedup:task_pool", "-", "+").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			s.t.Fatal(err)
		}
		for _, m := range msgs {
			u, _ := m.Values["url"].(string)
			where[u] = append(where[u], ip)
		}
		all = append(all, msgs...)
	}
	return where, all
}

// count says, of want, how many URLs no task_pool holds (lost) and how
// many more than one holds, or one twice (twice); and whether a task pool
// holds a URL not in want.
func count(where map[string][]netip.Addr, want map[string]bool) (lost, twice, strange int) {
	for u := range want {
		switch n := len(where[u]); {
		case n == 0:
			lost++
		case n > 1:
			twice++
		}
	}
	for u := range where {
		if !want[u] {
			strange++
		}
	}
	return lost, twice, strange
}
