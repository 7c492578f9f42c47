package dedupproto

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Tasks is a host's task_pool as its crawlers see it: a Redis stream with
// the consumer group CrawlersGroup. A crawler claims URLs, fetches them,
// and acknowledges them; URLs a crawler claimed and did not acknowledge
// (it died) are claimed again by another after they have been idle long
// enough. Every URL is handed out at least once.
type Tasks struct {
	c   *redis.Client
	key string
}

// Task is a URL to fetch.
type Task struct {
	ID  string // the stream entry, to acknowledge
	URL string
	// Missing lists the peers whose answers the protocol did not wait
	// for (their deadline passed): the URL may be held there.
	Missing string
	// Submitted is when the centre received the URL's frame (unix ms; 0
	// when not known).
	Submitted int64
}

// OpenTasks opens the task_pool in the host Redis at addr, under prefix
// ("" is DefaultPrefix), making it and the group when missing.
func OpenTasks(ctx context.Context, addr, prefix string) (*Tasks, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	c, err := dial(addr)
	if err != nil {
		return nil, err
	}
	t := &Tasks{c: c, key: keys(prefix).of(keyTaskPool)}
	if err := group(ctx, c, t.key, CrawlersGroup); err != nil {
		c.Close()
		return nil, err
	}
	return t, nil
}

// Close closes the connection.
func (t *Tasks) Close() error { return t.c.Close() }

// Claim returns up to n tasks for consumer: first those claimed by any
// consumer and not acknowledged for idle (0: none taken over), then new
// ones, waiting for them at most wait (0: not at all).
func (t *Tasks) Claim(ctx context.Context, consumer string, n int, idle, wait time.Duration) ([]Task, error) {
	var out []Task
	if idle > 0 {
		msgs, _, err := t.c.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: t.key, Group: CrawlersGroup,
			Consumer: consumer, MinIdle: idle, Start: "0-0", Count: int64(n)}).Result()
		if err != nil {
			return nil, fmt.Errorf("%w: task_pool: XAUTOCLAIM: %v", ErrUnavailable, err)
		}
		out = appendTasks(out, msgs)
	}
	if len(out) >= n {
		return out, nil
	}
	block := wait
	if wait <= 0 {
		block = -1
	}
	res, err := t.c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: CrawlersGroup, Consumer: consumer,
		Streams: []string{t.key, ">"}, Count: int64(n - len(out)), Block: block}).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return out, fmt.Errorf("%w: task_pool: XREADGROUP: %v", ErrUnavailable, err)
	}
	for _, s := range res {
		out = appendTasks(out, s.Messages)
	}
	return out, nil
}

func appendTasks(out []Task, msgs []redis.XMessage) []Task {
	for _, m := range msgs {
		t := Task{ID: m.ID}
		t.URL, _ = m.Values["url"].(string)
		t.Missing, _ = m.Values["missing"].(string)
		if s, ok := m.Values["submitted"].(string); ok {
			fmt.Sscan(s, &t.Submitted)
		}
		out = append(out, t)
	}
	return out
}

// Ack acknowledges tasks done: they are not handed out again.
func (t *Tasks) Ack(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := t.c.XAck(ctx, t.key, CrawlersGroup, ids...).Err(); err != nil {
		return fmt.Errorf("%w: task_pool: XACK: %v", ErrUnavailable, err)
	}
	return nil
}
