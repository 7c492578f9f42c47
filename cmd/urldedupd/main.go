// Command urldedupd tells whether a URL has been seen before, at line rate
// and across restarts, with one bit per URL in memory-mapped shard files.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/capture/source"
	"github.com/urldedupd/urldedupd/internal/format"
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
		fmt.Fprintf(os.Stderr, "urldedupd: %v%s\n", err, hint(err))
	}
	os.Exit(exitCode(err))
}

// hint is what the CLI adds to an error from the packages: what to run
// about it.
func hint(err error) string {
	switch {
	case errors.Is(err, format.ErrNoState):
		return " (run 'urldedupd init')"
	case errors.Is(err, source.ErrPermission):
		return " (run as root, or give the binary the capabilities once: setcap cap_net_raw,cap_net_admin+ep $(command -v urldedupd); the systemd unit in scripts/deploy grants them)"
	}
	return ""
}

// rewordedError is a package's error as the CLI words it (naming its
// flags); errors.Is and errors.As still find the package's error.
type rewordedError struct {
	msg string
	err error
}

func (e *rewordedError) Error() string { return e.msg }
func (e *rewordedError) Unwrap() error { return e.err }

// reworded returns err with the message format makes of args.
func reworded(err error, format string, args ...any) error {
	return &rewordedError{msg: fmt.Sprintf(format, args...), err: err}
}
