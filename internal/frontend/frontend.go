package frontend

import (
	"context"
	"time"
)

// A FrontEnd serves clients their decisions over one protocol, on
// listeners the daemon opened for it (before privileges were dropped).
// The daemon runs a list of them over one state:
//
//	go fe.Serve(ctx)       // for each, until the daemon stops
//	fe.Drain()             // for each, when it stops: refuse new work
//	fe.Shutdown(graceCtx)  // for each, at once: finish, then close
//
// A front end's connections take slots of a ConnLimit, the bytes its
// requests hold are charged to a Budget, a client proves itself with a
// token (TokenMatches; CheckListen refuses a non-loopback address without
// one), and every request is reported to an Observer, for the metrics.
type FrontEnd interface {
	// Name names the front end in logs and metrics ("api", "resp").
	Name() string
	// Serve serves on the front end's listeners until Shutdown, and then
	// returns nil; any other return is a failure of a listener.
	Serve(ctx context.Context) error
	// Drain prepares the shutdown, without waiting: requests still
	// arriving (a body, a command's arguments) are refused at once, and
	// so are later ones; requests that have arrived are answered as
	// usual.
	Drain()
	// Shutdown closes the listeners and the connections with no request
	// being served, lets the requests being served finish until ctx
	// ends, then closes every connection. Cutting clients off at the end
	// of the grace is not an error.
	Shutdown(ctx context.Context) error
}

// Observer is told about every request a front end served: the operation
// (an HTTP endpoint, a RESP command), a status ("200", "503"; for RESP,
// "ok" or the error's first word), how long it took, and how many URLs it
// found new and seen before. It must be safe for concurrent use.
type Observer func(op, status string, d time.Duration, nNew, nDup int)

// graceKey carries the grace a shutdown was given.
type graceKey struct{}

// WithGrace returns a context for Shutdown that ends after grace, and
// carries grace for the front end's messages.
func WithGrace(parent context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithValue(parent, graceKey{}, grace), grace)
}

// Grace is the grace WithGrace gave ctx.
func Grace(ctx context.Context) (time.Duration, bool) {
	g, ok := ctx.Value(graceKey{}).(time.Duration)
	return g, ok
}
