// Command urldedupd tells whether a URL has been seen before, at line rate
// and across restarts, with one bit per URL in memory-mapped shard files.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// quiet drops the Redis client's own log lines: every failure that matters
// comes back as an error, which urldedupd reports with its context.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func main() {
	redis.SetLogger(quiet{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal asks for a clean stop; restoring the default
		// makes a second one end the process at once (a read from an idle
		// terminal does not see the context).
		<-ctx.Done()
		stop()
	}()
	err := newRootCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "urldedupd:", err)
	}
	os.Exit(exitCode(err))
}
