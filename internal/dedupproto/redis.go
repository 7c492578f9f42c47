package dedupproto

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The keys, each after the topology's prefix and a colon. A host's Redis
// holds URL_pool, task_pool, its inbox and its frame sequence; a centre's
// holds task_URL, local_reduce_pool, dist_reduce_pool, its inbox and the
// bookkeeping of the frames in the pools.
const (
	keyURLPool   = "URL_pool"          // list: URLs the host's crawler extracted
	keyTaskPool  = "task_pool"         // stream: URLs the host's crawlers are to fetch
	keyInbox     = "inbox"             // list: frames sent to this node
	keyWork      = "inbox:work"        // list: the frame being handled (moved from inbox)
	keySeq       = "seq"               // the host's frame counter
	keyTaskURL   = "task_URL"          // stream: new URLs, handed out to the hosts' task pools
	keyLocal     = "local_reduce_pool" // hash: number → frame its hosts are checking
	keyDist      = "dist_reduce_pool"  // hash: number → frame other networks are checking, or this network for them
	keyDeadlines = "deadlines"         // sorted set: number by deadline (unix ms)
	keyExpect    = "expect:"           // + number: set of the addresses whose answer is awaited
	keySince     = "since"             // hash: number → when the submission arrived (unix ms)
	keyMissing   = "missing"           // hash: number → the peers that did not answer it in time
	keyOutbox    = "outbox:"           // + peer address: frames waiting to be pushed onto its inbox
	keyDone      = "done:"             // + number: the frame was completed (expires after doneTTL)
)

// Consumer groups.
const (
	// HostsGroup is the group of a network's hosts on its centre's
	// task_URL.
	HostsGroup = "hosts"
	// CrawlersGroup is the group of a host's crawlers on its task_pool.
	CrawlersGroup = "crawlers"
)

// doneTTL is how long a centre remembers a completed frame, to ignore a
// re-sent submission or request of it.
const doneTTL = time.Hour

// block bounds every blocking read, so that a loop sees its context's end
// and its deadlines within it.
const block = 500 * time.Millisecond

// ErrUnavailable wraps a failure to reach a node's Redis.
var ErrUnavailable = errors.New("dedupproto: redis unavailable")

type keys string

func (k keys) of(name string) string { return string(k) + ":" + name }

// dial opens a client of the Redis at addr. It never re-sends a command
// (MaxRetries -1): a frame pushed twice would be a second submission, so
// every receiver ignores repeats instead, and the loops retry themselves.
func dial(addr string) (*redis.Client, error) {
	o, err := redis.ParseURL(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrTopology, addr, err)
	}
	o.MaxRetries = -1
	o.ReadTimeout = 5 * time.Second
	o.WriteTimeout = 5 * time.Second
	o.DialTimeout = 5 * time.Second
	return redis.NewClient(o), nil
}

// group makes the consumer group on the stream key (and the stream),
// from the stream's beginning, unless it is there.
func group(ctx context.Context, c *redis.Client, key, name string) error {
	err := c.XGroupCreateMkStream(ctx, key, name, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("%w: %s: XGROUP CREATE %s %s: %v", ErrUnavailable, c.Options().Addr, key, name, err)
	}
	return nil
}

// inbox moves the next frame of the inbox to the work list, waiting at
// most wait, and returns it (nil when none came). A frame left in the
// work list by a node that stopped is returned first.
func inbox(ctx context.Context, c *redis.Client, k keys, wait time.Duration) ([]byte, error) {
	b, err := c.LIndex(ctx, k.of(keyWork), 0).Bytes()
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if wait <= 0 {
		b, err = c.LMove(ctx, k.of(keyInbox), k.of(keyWork), "LEFT", "RIGHT").Bytes()
	} else {
		// Not c.BLMove: it rounds a wait under a second up to one.
		var v any
		v, err = c.Do(ctx, "BLMOVE", k.of(keyInbox), k.of(keyWork), "LEFT", "RIGHT", seconds(wait)).Result()
		if s, ok := v.(string); ok {
			b = []byte(s)
		}
	}
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return b, nil
}

// seconds is d as Redis takes a blocking command's timeout.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// handled drops the frame inbox returned, once it is dealt with.
func handled(ctx context.Context, c *redis.Client, k keys) error {
	if err := c.LPop(ctx, k.of(keyWork)).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// send pushes the frame f onto the inbox of the node whose Redis is c.
func send(ctx context.Context, c *redis.Client, k keys, f *Frame, st *Stats) error {
	b, err := f.Append(nil)
	if err != nil {
		return err
	}
	if err := c.RPush(ctx, k.of(keyInbox), b).Err(); err != nil {
		st.add(SendFailures, 1)
		return fmt.Errorf("%w: %s: %v", ErrUnavailable, c.Options().Addr, err)
	}
	st.add(FramesSent, 1)
	st.add(BytesSent, len(b))
	return nil
}
