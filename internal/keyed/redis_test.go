package keyed

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/redistest"
)

// redisServer starts a real redis-server (internal/redistest) and returns
// a client factory; the server is killed, by pid, when the test ends.
func redisServer(tb testing.TB) func() *redis.Client {
	tb.Helper()
	addr := redistest.Server(tb)
	opts, err := redis.ParseURL(addr)
	if err != nil {
		tb.Fatal(err)
	}
	return func() *redis.Client {
		c := redis.NewClient(opts)
		tb.Cleanup(func() { c.Close() })
		return c
	}
}

// TestRedisSameAsTable decides the same URLs, past full, on Redis and on a
// local table: the same answers, and the same bytes in every shard. Under
// -race an eighth of the table and of the URLs (sized): the same load.
func TestRedisSameAsTable(t *testing.T) {
	sb, repeats := sized(4096), sized(20000)
	g := mustGeometry(t, int64(sb))
	client := redisServer(t)()
	ctx := context.Background()
	rt := NewRedis(client, "urldedupd-test", g)
	shards := heapShards(sb)
	tab, _ := NewTable(shards, false)
	locs := testLocs(g, "r", 0, sized(250000)) // 262,144 slots: about 15% of URLs not stored
	locs = append(locs, locs[:repeats]...)
	res, want := make([]Result, 1000), make([]Result, 1000)
	dry := make([]Result, 1000)
	for off := 0; off < len(locs); off += len(res) {
		part := locs[off:min(off+len(res), len(locs))]
		if _, err := rt.DecideBatch(ctx, part, dry, true); err != nil {
			t.Fatal(err)
		}
		wantDry := make([]Result, len(part))
		tab.DecideBatch(part, wantDry, true)
		if _, err := rt.DecideBatch(ctx, part, res, false); err != nil {
			t.Fatal(err)
		}
		tab.DecideBatch(part, want, false)
		for i := range part {
			if res[i] != want[i] || dry[i] != wantDry[i] {
				t.Fatalf("URL %d: redis %v (dry %v), table %v (dry %v)", off+i, res[i], dry[i], want[i], wantDry[i])
			}
		}
	}
	if rc, tc := rt.Counts(), tab.Counts(); rc != tc || rc.Full == 0 || rc.Dup < uint64(repeats) {
		t.Errorf("counts: redis %+v, table %+v", rc, tc)
	}
	for i := range Shards {
		b, err := client.Get(ctx, rt.Key(uint8(i))).Bytes()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		if len(b) > sb {
			t.Fatalf("shard %02x: %d bytes in redis", i, len(b))
		}
		b = append(b, make([]byte, sb-len(b))...)
		if !bytes.Equal(b, shards[i]) {
			t.Fatalf("shard %02x differs between redis and the table", i)
		}
	}
	// after SCRIPT FLUSH the script is loaded again
	if err := client.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.DecideBatch(ctx, locs[:10], res, false); err != nil || res[0] != Dup {
		t.Errorf("after SCRIPT FLUSH: %v, %v", err, res[0])
	}
}

// TestRedisExactlyOnce: 4 clients, each on its own connection, decide
// overlapping halves of 100,000 URLs on one server.
func TestRedisExactlyOnce(t *testing.T) {
	const n, sb = 100000, 64 << 10
	g := mustGeometry(t, sb)
	newClient := redisServer(t)
	ctx := context.Background()
	locs := testLocs(g, "x", 0, n)
	news := make([][]int, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for w := range 4 {
		rt := NewRedis(newClient(), "urldedupd-once", g)
		wg.Go(func() {
			res := make([]Result, 500)
			for j := 0; j < n/2; j += len(res) {
				part := make([]Loc, 0, len(res))
				for k := j; k < min(j+len(res), n/2); k++ {
					part = append(part, locs[(w*n/4+k)%n])
				}
				if _, err := rt.DecideBatch(ctx, part, res, false); err != nil {
					errs[w] = err
					return
				}
				for k := range part {
					if res[k] == New {
						news[w] = append(news[w], (w*n/4+j+k)%n)
					}
				}
			}
		})
	}
	wg.Wait()
	count := map[int]int{}
	for w := range 4 {
		if errs[w] != nil {
			t.Fatal(errs[w])
		}
		for _, i := range news[w] {
			count[i]++
		}
	}
	for i := range n {
		if count[i] != 1 {
			t.Errorf("URL %d reported new %d times", i, count[i])
		}
	}
	// and the result is the table a local run makes, up to slot order
	rt := NewRedis(newClient(), "urldedupd-once", g)
	res := make([]Result, n)
	if c, err := rt.DecideBatch(ctx, locs, res, true); err != nil || c.Dup != n {
		t.Errorf("dry run after: %+v, %v", c, err)
	}
}
