package redisstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
)

// OrShard ORs data (a shard's bytes) into shard i's key, atomically: the
// bytes go to a temporary key in the same cluster slot (its hash tag is the
// key's own name), then BITOP OR and DEL run in one transaction. OR is
// idempotent, so running it again changes nothing.
func (r *Redis) OrShard(ctx context.Context, i int, data []byte) error {
	key := r.keys[i]
	tmp := "{" + key + "}.migrate"
	_, err := r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, tmp, data, time.Hour)
		p.BitOpOr(ctx, key, key, tmp)
		p.Del(ctx, tmp)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redisstate: merge into %s: %w: %v", key, ErrUnavailable, err)
	}
	return nil
}

// CopyShard sets shard i's key to data (a shard's bytes, Keyed layout)
// unless the key exists (SET NX, atomic): a byte copy is right only into an
// empty shard. It reports whether it copied; when not, the caller merges
// (keyed.MergeShard with r as the Inserter).
func (r *Redis) CopyShard(ctx context.Context, i int, data []byte) (bool, error) {
	if int64(len(data)) > r.meta.Sizes.ShardBytes {
		return false, fmt.Errorf("redisstate: copy into %s: %w: %d bytes, shards of %d", r.keys[i], format.ErrShardSize, len(data), r.meta.Sizes.ShardBytes)
	}
	n := len(data) // a key ends at its last slot written; the rest reads as zeros
	for n > 0 && data[n-1] == 0 {
		n--
	}
	ok, err := r.c.SetNX(ctx, r.keys[i], data[:(n+3)&^3], 0).Result()
	if err != nil {
		return false, fmt.Errorf("redisstate: copy into %s: %w: %v", r.keys[i], ErrUnavailable, err)
	}
	return ok, nil
}

// Shard returns shard i's bytes, padded with zeros to the shard size (Redis
// drops trailing zero bytes it never wrote).
func (r *Redis) Shard(ctx context.Context, i int) ([]byte, error) {
	b, err := r.c.Get(ctx, r.keys[i]).Bytes()
	if errors.Is(err, redis.Nil) {
		b, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redisstate: read %s: %w: %v", r.keys[i], ErrUnavailable, err)
	}
	size := r.meta.Sizes.ShardBytes
	if int64(len(b)) > size {
		return nil, fmt.Errorf("redisstate: %s: %w: %d bytes, shards of %d", r.keys[i], format.ErrShardSize, len(b), size)
	}
	out := make([]byte, size)
	copy(out, b)
	return out, nil
}

// Progress records which shards of an upload are done, so that an
// interrupted migrate resumes where it stopped. The record is a Redis set
// named after the source; it expires after a week.
type Progress struct {
	r   *Redis
	key string
}

// Progress returns the record of uploads from the source named id.
func (r *Redis) Progress(id string) *Progress {
	return &Progress{r: r, key: r.prefix + ":migrated:" + id}
}

// Done reports whether shard i was uploaded.
func (p *Progress) Done(ctx context.Context, i int) (bool, error) {
	ok, err := p.r.c.SIsMember(ctx, p.key, i).Result()
	if err != nil {
		return false, fmt.Errorf("redisstate: %s: %w: %v", p.key, ErrUnavailable, err)
	}
	return ok, nil
}

// Mark records shard i as uploaded.
func (p *Progress) Mark(ctx context.Context, i int) error {
	pipe := p.r.c.Pipeline()
	pipe.SAdd(ctx, p.key, strconv.Itoa(i))
	pipe.Expire(ctx, p.key, 7*24*time.Hour)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redisstate: %s: %w: %v", p.key, ErrUnavailable, err)
	}
	return nil
}

// Empty reports whether none of the 256 shard keys exists, but for those
// done records as already copied (nil: none).
func (r *Redis) Empty(ctx context.Context, done *Progress) (bool, error) {
	pipe := r.c.Pipeline()
	exists := make([]*redis.IntCmd, len(r.keys))
	for i, k := range r.keys {
		exists[i] = pipe.Exists(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return false, fmt.Errorf("redisstate: %w: %v", ErrUnavailable, err)
	}
	for i, e := range exists {
		if e.Val() == 0 {
			continue
		}
		if done == nil {
			return false, nil
		}
		if ok, err := done.Done(ctx, i); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}
