// Command protobench is scripts/bench-protocol.sh's driver (issue 23): the
// pieces the script runs inside its network namespaces.
//
//	protobench proxy -listen ADDR -to ADDR -delay D
//	    a TCP proxy adding D to every byte's way, in each direction (the
//	    links between networks: this kernel has no netem);
//	protobench host -redis ADDR -state WHERE [-cache DIR]
//	    a host of urldedupd's own design: it takes its crawler's URLs from
//	    URL_pool, decides them against one shared state (with a local
//	    cache in front), and adds the new ones to its task_pool; the same
//	    keys as the protocol's host, so the load is the same;
//	protobench load -hosts IP=REDIS,... [-urls N] ...
//	    pushes each host's extracted URLs onto its URL_pool in batches at a
//	    steady rate, waits until the task pools stop growing, and prints
//	    one JSON line: URLs a second, URLs let through twice, URLs lost,
//	    and the latency from a URL's first push to its first task_pool
//	    entry (p50, p99).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: protobench proxy|host|load [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "proxy":
		err = proxy(ctx, os.Args[2:])
	case "host":
		err = host(ctx, os.Args[2:])
	case "load":
		err = load(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "protobench:", err)
		os.Exit(1)
	}
}

// proxy forwards every connection to -to, each chunk read held until
// -delay after it was read (order kept).
func proxy(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("proxy", flag.ExitOnError)
	listen := fs.String("listen", "", "address to listen on")
	to := fs.String("to", "", "address to forward to")
	delay := fs.Duration("delay", 10*time.Millisecond, "one-way delay")
	fs.Parse(args)
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); l.Close() }()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("tcp", *to)
			if err != nil {
				return
			}
			defer u.Close()
			done := make(chan struct{}, 2)
			go func() { delayed(u, c, *delay); done <- struct{}{} }()
			go func() { delayed(c, u, *delay); done <- struct{}{} }()
			<-done
		}()
	}
}

type chunk struct {
	at time.Time
	b  []byte
}

// delayed copies src to dst, each chunk written delay after it was read.
func delayed(dst io.WriteCloser, src io.Reader, delay time.Duration) {
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 64<<10)
			n, err := src.Read(b)
			if n > 0 {
				q <- chunk{time.Now().Add(delay), b[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
	for range q {
	}
}

// host is urldedupd's design's host.
func host(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("host", flag.ExitOnError)
	addr := fs.String("redis", "", "the host's own Redis (URL_pool, task_pool)")
	where := fs.String("state", "", "the shared state (a Redis address)")
	prefix := fs.String("state-prefix", "shared", "the shared state's key prefix")
	cache := fs.String("cache", "", "the local cache directory (none when empty)")
	batch := fs.Int("batch", 1000, "URLs decided at a time")
	fs.Parse(args)
	st, err := urldedupd.Open(ctx, *where, &urldedupd.Options{Prefix: *prefix, Cache: *cache, Timeout: time.Minute})
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintln(os.Stderr, "ready")
	o, err := redis.ParseURL(*addr)
	if err != nil {
		return err
	}
	o.MaxRetries = -1
	c := redis.NewClient(o)
	defer c.Close()
	var taken, fed, commands int
	defer func() {
		fmt.Fprintf(os.Stderr, "urls_taken\t%d\ntasks_fed\t%d\nredis_commands\t%d\n", taken, fed, commands)
	}()
	for ctx.Err() == nil {
		urls, err := c.LRange(ctx, "dedup:URL_pool", 0, int64(*batch-1)).Result()
		commands++
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(urls) == 0 {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		dup := make([]bool, len(urls))
		if err := st.Decide(ctx, urls, dup); err != nil {
			return err
		}
		p := c.TxPipeline()
		for i, u := range urls {
			if !dup[i] {
				p.XAdd(ctx, &redis.XAddArgs{Stream: "dedup:task_pool", Values: map[string]any{"url": u}})
				fed++
			}
		}
		p.LTrim(ctx, "dedup:URL_pool", int64(len(urls)), -1)
		if _, err := p.Exec(ctx); err != nil {
			return err
		}
		commands++
		taken += len(urls)
	}
	return nil
}

// load pushes the hosts' URLs and measures what comes out.
func load(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	hostsFlag := fs.String("hosts", "", "IP=REDIS,... every host, network by network (10.<net>.0.<n>)")
	down := fs.String("down", "", "a host whose crawler is down: nothing is pushed there")
	perHost := fs.Int("urls", 20000, "URLs each host extracts")
	batchN := fs.Int("batch", 500, "URLs a push")
	every := fs.Duration("every", 100*time.Millisecond, "a push this often, per host")
	global := fs.Int("global", 40000, "URLs every host may extract (shared across networks)")
	local := fs.Int("local", 20000, "URLs the hosts of one network may extract")
	settle := fs.Duration("settle", 10*time.Second, "the task pools unchanged this long, once something came: done (longer than a frame's deadlines)")
	limit := fs.Duration("limit", 10*time.Minute, "give up after this long")
	seed := fs.Uint64("seed", 1, "random seed")
	fs.Parse(args)

	type hostT struct {
		ip, net string
		c       *redis.Client
		urls    []string
	}
	var hosts []*hostT
	for _, kv := range strings.Split(*hostsFlag, ",") {
		ip, addr, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("-hosts: %q is not IP=REDIS", kv)
		}
		o, err := redis.ParseURL(addr)
		if err != nil {
			return err
		}
		o.MaxRetries = -1
		parts := strings.Split(ip, ".")
		if len(parts) != 4 {
			return fmt.Errorf("-hosts: %q: want an IPv4 address", ip)
		}
		hosts = append(hosts, &hostT{ip: ip, net: parts[1], c: redis.NewClient(o)})
	}
	// Each host's crawler extracts: half its URLs from pages every
	// network links to, 30% from its own network's, 20% its own only;
	// repeats within a host come from the same draws.
	rng := rand.New(rand.NewPCG(*seed, 23))
	for _, h := range hosts {
		for i := 0; i < *perHost; i++ {
			var u string
			switch r := rng.Float64(); {
			case r < 0.5:
				u = fmt.Sprintf("http://popular%d.example/page/%d", rng.IntN(50), rng.IntN(*global))
			case r < 0.8:
				u = fmt.Sprintf("http://net%s-site%d.example/page/%d", h.net, rng.IntN(20), rng.IntN(*local))
			default:
				u = fmt.Sprintf("http://host%s.example/page/%d", h.ip, i)
			}
			h.urls = append(h.urls, u)
		}
	}
	for _, h := range hosts {
		if err := h.c.Del(ctx, "dedup:task_pool").Err(); err != nil {
			return err
		}
	}
	firstPush := map[string]time.Time{}
	distinct := map[string]bool{}
	start := time.Now()
	// Push: every host a batch each -every, all hosts in step.
	for b := 0; b*(*batchN) < *perHost; b++ {
		at := start.Add(time.Duration(b) * *every)
		time.Sleep(time.Until(at))
		for _, h := range hosts {
			if h.ip == *down {
				continue
			}
			lo, hi := b*(*batchN), min((b+1)*(*batchN), *perHost)
			batch := h.urls[lo:hi]
			args := make([]any, len(batch))
			now := time.Now()
			for i, u := range batch {
				args[i] = u
				if _, ok := firstPush[u]; !ok {
					firstPush[u] = now
				}
				distinct[u] = true
			}
			if err := h.c.RPush(ctx, "dedup:URL_pool", args...).Err(); err != nil {
				return err
			}
		}
	}
	pushed := time.Now()
	// Wait until the task pools stop growing.
	var total int64
	lastChange := time.Now()
	for total == 0 || time.Since(lastChange) < *settle {
		if time.Since(start) > *limit {
			return fmt.Errorf("still moving after %v", *limit)
		}
		time.Sleep(200 * time.Millisecond)
		var n int64
		for _, h := range hosts {
			l, err := h.c.XLen(ctx, "dedup:task_pool").Result()
			if err != nil {
				return err
			}
			n += l
		}
		if n != total {
			total, lastChange = n, time.Now()
		}
	}
	// Count and time.
	where := map[string]int{}
	firstOut := map[string]time.Time{}
	var last time.Time
	for _, h := range hosts {
		msgs, err := h.c.XRange(ctx, "dedup:task_pool", "-", "+").Result()
		if err != nil {
			return err
		}
		for _, m := range msgs {
			u, _ := m.Values["url"].(string)
			where[u]++
			ms, _ := strconv.ParseInt(strings.Split(m.ID, "-")[0], 10, 64)
			at := time.UnixMilli(ms)
			if t, ok := firstOut[u]; !ok || at.Before(t) {
				firstOut[u] = at
			}
			if at.After(last) {
				last = at
			}
		}
	}
	lost, twice := 0, 0
	var lat []float64
	for u := range distinct {
		switch where[u] {
		case 0:
			lost++
			continue
		case 1:
		default:
			twice++
		}
		lat = append(lat, float64(firstOut[u].Sub(firstPush[u]).Microseconds())/1000)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	pushedN := 0
	for _, h := range hosts {
		if h.ip != *down {
			pushedN += len(h.urls)
		}
	}
	out := map[string]any{
		"urls_pushed": pushedN, "distinct": len(distinct), "handed_out": total,
		"lost": lost, "twice": twice,
		"push_seconds":   pushed.Sub(start).Seconds(),
		"done_seconds":   last.Sub(start).Seconds(),
		"urls_per_s":     float64(pushedN) / last.Sub(start).Seconds(),
		"latency_p50_ms": pct(0.50), "latency_p99_ms": pct(0.99),
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
