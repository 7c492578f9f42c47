package main_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The README's Go example for crawlers: go-redis (RESP3 by default, and
// RESP2) talking to serve --resp-listen, as written there.
func TestGoRedisClient(t *testing.T) {
	t.Parallel()
	_, _, port := serveRESP(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, proto := range []int{3, 2} {
		// As in the README: no retries, so a command whose reply was lost
		// is never sent again (it would find its own URLs seen).
		rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port, Protocol: proto, MaxRetries: -1})
		key := "crawl-go" + string(rune('0'+proto))
		links := []any{"http://go.example/a", "http://go.example/b", "http://go.example/a"}
		isNew, err := rdb.BFMAdd(ctx, key, links...).Result()
		if err != nil || !slices.Equal(isNew, []bool{true, true, false}) {
			t.Errorf("RESP%d BF.MADD: %v, %v", proto, isNew, err)
		}
		added, err := rdb.BFAdd(ctx, key, "http://go.example/c").Result()
		if err != nil || !added {
			t.Errorf("RESP%d BF.ADD: %v, %v", proto, added, err)
		}
		seen, err := rdb.BFMExists(ctx, key, "http://go.example/b", "http://go.example/z").Result()
		if err != nil || !slices.Equal(seen, []bool{true, false}) {
			t.Errorf("RESP%d BF.MEXISTS: %v, %v", proto, seen, err)
		}
		rdb.Close()
	}
}
