package respserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/state"
)

// Options configure a FrontEnd. Zero fields take the defaults below.
type Options struct {
	// Token, when set, is what AUTH and HELLO's AUTH must give; every
	// command but AUTH, HELLO and QUIT is refused (NOAUTH) before it.
	Token string
	// DefaultKey is the key whose items are signed exactly as filter, the
	// sensor and the HTTP API sign a URL; default DefaultKey.
	DefaultKey string
	// MaxConns is the most connections served at once (the Limit's
	// size); default 1024. It also sets the share of MaxInflightBytes
	// kept for each.
	MaxConns int
	// MaxInflightBytes caps the bytes the connections' buffers hold at
	// once; default 80 MiB, a fifth kept in equal shares, one for each
	// connection (frontend.Budget). A command that does not fit is
	// answered an error and its connection closed.
	MaxInflightBytes int64
	// MaxItem caps an item (a URL) in bytes; default 64 KiB.
	MaxItem int
	// MaxItems caps the items of one BF.MADD or BF.MEXISTS; default
	// 100,000.
	MaxItems int
	// MaxCommand caps a command's bytes as sent; default 32 MiB, at most
	// what one connection may hold of MaxInflightBytes.
	MaxCommand int
	// IdleTimeout closes a connection that starts no command for this
	// long (at least 15/16 of it: the deadline is moved only when a
	// sixteenth has passed); zero: never.
	IdleTimeout time.Duration
	// CommandTimeout bounds the arrival of a command once it has begun,
	// and the writing of a burst's replies; default 30 seconds.
	CommandTimeout time.Duration
	// Observe, when set, is told about every command.
	Observe frontend.Observer
	// Goroutines serves each connection from a goroutine of its own
	// rather than from the event loop (Linux's epoll; the only way
	// elsewhere): slower for single commands (docs/BENCHMARKS.md), kept
	// to compare.
	Goroutines bool
	// Loops is how many event loops serve the connections, handed to
	// them in turn; zero: one for every two processors (as
	// redis-server's one thread, the other processor left to the
	// clients). A loop decides on one processor: more loops use more of
	// them for big batches, at some cost to single commands
	// (docs/BENCHMARKS.md, "Event loops").
	Loops int
}

// Defaults of Options.
const (
	DefaultKey              = "urls"
	DefaultMaxConns         = 1024
	DefaultMaxInflightBytes = 80 << 20
	DefaultMaxItem          = 64 << 10
	DefaultMaxItems         = 100_000
	DefaultMaxCommand       = 32 << 20
	DefaultCommandTimeout   = 30 * time.Second
	// bufferSize is a connection's first buffer, and what it goes back to.
	bufferSize = 16 << 10
	// chunk is the signatures decided at a time, as the HTTP API does.
	chunk = 1024
)

// Config is the server around the protocol: listeners the caller opened,
// the connection limit, the logger.
type Config struct {
	Listeners []net.Listener
	// Limit caps the connections served at once; nil: a ConnLimit of
	// Options.MaxConns.
	Limit  *frontend.ConnLimit
	Logger *slog.Logger
}

// FrontEnd is the RESP server as a frontend.FrontEnd. It is safe for
// concurrent use.
type FrontEnd struct {
	st        *state.State
	opts      Options
	listeners []net.Listener
	limit     *frontend.ConnLimit
	budget    *frontend.Budget
	log       *slog.Logger
	info      infoCache
	ids       atomic.Int64

	draining atomic.Bool
	mu       sync.Mutex
	conns    map[*conn]struct{} // guarded by mu
	closing  bool               // Shutdown began; guarded by mu
	serving  []net.Listener     // the listeners as Serve accepts (limited); guarded by mu
	loops    []*evLoop          // the event loops, when connections are served by them; guarded by mu
	next     int                // the loop the next connection goes to; guarded by mu
	wg       sync.WaitGroup     // connections being served, and the loops
}

var _ frontend.FrontEnd = (*FrontEnd)(nil)

// New returns the RESP front end deciding against st.
func New(st *state.State, opts *Options, cfg *Config) *FrontEnd {
	f := &FrontEnd{st: st, conns: map[*conn]struct{}{}}
	if opts != nil {
		f.opts = *opts
	}
	o := &f.opts
	if o.DefaultKey == "" {
		o.DefaultKey = DefaultKey
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxInflightBytes <= 0 {
		o.MaxInflightBytes = DefaultMaxInflightBytes
	}
	if o.MaxItem <= 0 {
		o.MaxItem = DefaultMaxItem
	}
	if o.MaxItems <= 0 {
		o.MaxItems = DefaultMaxItems
	}
	if o.MaxCommand <= 0 {
		o.MaxCommand = DefaultMaxCommand
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	f.budget = frontend.NewBudget(o.MaxInflightBytes, o.MaxConns)
	o.MaxCommand = int(min(int64(o.MaxCommand), f.budget.Most()/2)) // the buffer grows by doubling
	if cfg != nil {
		f.listeners, f.limit, f.log = cfg.Listeners, cfg.Limit, cfg.Logger
	}
	if f.limit == nil {
		f.limit = frontend.NewConnLimit(o.MaxConns)
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	return f
}

// Name is "resp".
func (f *FrontEnd) Name() string { return "resp" }

// Conns is the front end's connection limit.
func (f *FrontEnd) Conns() *frontend.ConnLimit { return f.limit }

// Budget is the front end's in-flight byte budget.
func (f *FrontEnd) Budget() *frontend.Budget { return f.budget }

// Serve accepts connections on every listener until Shutdown.
func (f *FrontEnd) Serve(ctx context.Context) error {
	f.mu.Lock()
	if f.closing {
		f.mu.Unlock()
		return nil
	}
	for _, l := range f.listeners {
		f.serving = append(f.serving, f.limit.Listener(l))
	}
	for i := 0; i < f.loopCount() && !f.opts.Goroutines; i++ {
		lp, err := newLoop(f)
		if err != nil {
			f.log.Warn("RESP connections served by goroutines", "err", err)
			break
		}
		f.loops = append(f.loops, lp)
		f.wg.Add(1)
		go lp.run()
	}
	f.mu.Unlock()
	errc := make(chan error, len(f.listeners))
	for _, l := range f.serving {
		f.log.Info("RESP listening", "addr", l.Addr().String())
		go func() { errc <- f.accept(l) }()
	}
	var err error
	for range f.listeners {
		if e := <-errc; e != nil && err == nil {
			err = e
		}
	}
	return err
}

// accept serves l's connections until l is closed by Shutdown.
func (f *FrontEnd) accept(l net.Listener) error {
	var pause time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			f.mu.Lock()
			closing := f.closing
			f.mu.Unlock()
			if closing {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, errTooManyFiles) {
				pause = min(max(2*pause, 5*time.Millisecond), time.Second)
				f.log.Warn("RESP accept failed, retrying", "err", err, "pause", pause)
				time.Sleep(pause)
				continue
			}
			return err
		}
		pause = 0
		if f.toLoop(c) {
			continue
		}
		cn := f.newConn(c)
		f.mu.Lock()
		if f.closing {
			f.mu.Unlock()
			c.Close()
			continue
		}
		f.conns[cn] = struct{}{}
		f.wg.Add(1)
		f.mu.Unlock()
		go func() {
			defer f.wg.Done()
			cn.serve()
			f.mu.Lock()
			delete(f.conns, cn)
			f.mu.Unlock()
		}()
	}
}

// toLoop hands c to an event loop, and reports whether it did.
func (f *FrontEnd) toLoop(c net.Conn) bool {
	f.mu.Lock()
	n := len(f.loops)
	var lp *evLoop
	if n > 0 {
		lp, f.next = f.loops[f.next%n], f.next+1
	}
	f.mu.Unlock()
	if lp == nil {
		return false
	}
	cn := lp.adopt(c)
	if cn == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closing {
		lp.discard(cn)
		return true
	}
	f.wg.Add(1)
	lp.add(cn)
	return true
}

// Drain refuses commands still arriving and later ones: every connection
// answers the commands it has read, then closes.
func (f *FrontEnd) Drain() {
	f.draining.Store(true)
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		c.wake()
	}
	for _, lp := range f.loops {
		lp.poke()
	}
}

// Shutdown closes the listeners, lets the connections answer the
// commands they have read until ctx ends, then closes every connection.
func (f *FrontEnd) Shutdown(ctx context.Context) error {
	f.mu.Lock()
	f.closing = true
	serving := f.serving
	f.mu.Unlock()
	f.Drain()
	for _, l := range serving { // also ends an accept waiting for a connection slot
		l.Close()
	}
	for _, l := range f.listeners {
		l.Close()
	}
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	grace, _ := frontend.Grace(ctx)
	f.log.Warn("closing RESP connections still open after the shutdown grace", "grace", grace)
	f.mu.Lock()
	for c := range f.conns {
		c.c.Close()
	}
	for _, lp := range f.loops {
		lp.closeAll()
	}
	f.mu.Unlock()
	<-done
	return nil
}

// errTooManyFiles is the accept error of a process out of descriptors,
// which passes when connections close.
var errTooManyFiles = syscall.EMFILE
