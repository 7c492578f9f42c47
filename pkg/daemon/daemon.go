package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/urldedupd/urldedupd/pkg/api"
	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/capture"
)

// Config configures a Daemon.
type Config struct {
	Sources []SourceConfig
	Capture capture.Options
	// InFlight is how many batches of a capture source may be in flight to
	// a remote backend (default 4).
	InFlight int
	// Events is where first-seen requests go, as JSON lines.
	Events *EventLog
	// Socket is the Unix socket of the API ("" for none), created with
	// SocketMode (0660 when zero).
	Socket     string
	SocketMode os.FileMode
	// Listen is an optional TCP address for the API. A non-loopback one
	// needs AllowRemote and Token.
	Listen      string
	AllowRemote bool
	Token       string
	API         api.Options
	// HeaderTimeout bounds the reading of a request's head (zero: 10
	// seconds); IdleTimeout closes a kept-alive connection that sends no
	// next request (zero: 60 seconds). Bodies are bounded by
	// API.BodyTimeout.
	HeaderTimeout time.Duration
	IdleTimeout   time.Duration
	// ShutdownTimeout is the grace given at shutdown to requests whose body
	// has arrived (zero: 5 seconds); connections still open after it are
	// closed. Requests still receiving their body are answered 503 at once.
	ShutdownTimeout time.Duration
	Logger          *slog.Logger
}

// Defaults of Config, and the cap on a request's head: enough for a GET
// of a maximal URL percent-encoded, far from net/http's 1 MiB.
const (
	DefaultHeaderTimeout   = 10 * time.Second
	DefaultIdleTimeout     = 60 * time.Second
	DefaultShutdownTimeout = 5 * time.Second
	MaxHeaderBytes         = 256 << 10
)

// Errors of New.
var (
	ErrRemoteNeedsFlag  = errors.New("listening on a non-loopback address needs --allow-remote")
	ErrRemoteNeedsToken = errors.New("listening on a non-loopback address needs a bearer token")
	ErrSocketInUse      = errors.New("socket is in use by a running process")
)

// Daemon is a configured `serve`: its sockets are open, so privileges can
// be dropped before Run.
type Daemon struct {
	cfg       Config
	backend   api.Backend
	set       *bitcheck.Set // local state, deciding capture sources at once; nil with Redis
	sync      func() error
	sources   []*source
	listeners []net.Listener
	metrics   *metrics
	log       *slog.Logger
}

// New opens the capture sources and the listeners. The API decides with
// backend; so do capture sources, in batches, unless set (the local state,
// nil when the backend is Redis) lets them decide each request at once.
// sync, when set, is called at shutdown to put the state on disk.
// On error New closes what it opened.
func New(backend api.Backend, set *bitcheck.Set, sync func() error, cfg Config) (d *Daemon, err error) {
	d = &Daemon{cfg: cfg, backend: backend, set: set, sync: sync, log: cfg.Logger}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	defer func() {
		if err != nil {
			d.closeAll()
		}
	}()
	if cfg.Listen != "" {
		if err := checkListen(cfg); err != nil {
			return nil, err
		}
	}
	for _, sc := range cfg.Sources {
		live, err := capture.OpenLive(sc.Iface, &capture.LiveOptions{BPF: sc.BPF})
		if err != nil {
			return nil, err
		}
		d.sources = append(d.sources, &source{cfg: sc, live: live})
	}
	if cfg.Socket != "" {
		l, err := listenUnix(cfg.Socket, cfg.SocketMode)
		if err != nil {
			return nil, err
		}
		d.listeners = append(d.listeners, l)
	}
	if cfg.Listen != "" {
		l, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("daemon: listen %s: %w", cfg.Listen, err)
		}
		d.listeners = append(d.listeners, l)
	}
	d.metrics = newMetrics(d)
	return d, nil
}

func checkListen(cfg Config) error {
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return fmt.Errorf("daemon: --listen %q: %w", cfg.Listen, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	switch {
	case !cfg.AllowRemote:
		return fmt.Errorf("daemon: --listen %s: %w", cfg.Listen, ErrRemoteNeedsFlag)
	case cfg.Token == "":
		return fmt.Errorf("daemon: --listen %s: %w", cfg.Listen, ErrRemoteNeedsToken)
	}
	return nil
}

// listenUnix listens on a Unix socket, replacing a stale socket file left
// by a process that died, but never one a live process serves.
func listenUnix(path string, mode os.FileMode) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("daemon: socket %s: exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("daemon: socket %s: %w", path, ErrSocketInUse)
		}
		os.Remove(path)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("daemon: listen %s: %w", path, err)
	}
	if mode == 0 {
		mode = 0o660
	}
	if err := os.Chmod(path, mode); err != nil {
		l.Close()
		return nil, fmt.Errorf("daemon: socket %s: %w", path, err)
	}
	return l, nil
}

func (d *Daemon) closeAll() {
	for _, s := range d.sources {
		s.live.Close()
	}
	for _, l := range d.listeners {
		l.Close()
	}
}

// Run serves until ctx ends: then it stops the sources, stops the API
// (requests being decided get ShutdownTimeout; slow clients are cut off,
// which is not an error), flushes the event log and syncs the state.
// SIGHUP reopens the event log.
func (d *Daemon) Run(ctx context.Context) error {
	apiOpts := d.cfg.API
	apiOpts.Token = d.cfg.Token
	apiOpts.Observe = d.metrics.observe
	mux := http.NewServeMux()
	apiSrv := api.New(d.backend, &apiOpts)
	d.metrics.watchAPI(apiSrv)
	apiHandler := apiSrv.Handler()
	mux.Handle("/v1/", apiHandler)
	mux.Handle("/healthz", apiHandler)
	mux.Handle("/metrics", api.RequireToken(d.cfg.Token, promhttp.HandlerFor(d.metrics.reg, promhttp.HandlerOpts{})))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: orDefault(d.cfg.HeaderTimeout, DefaultHeaderTimeout),
		IdleTimeout:       orDefault(d.cfg.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    MaxHeaderBytes,
	}
	conns := newAPIConns()
	conns.install(srv)

	srcCtx, stopSources := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); releaseMemory(srcCtx, conns) }()
	f := d.backend.Meta().Format
	for _, s := range d.sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dec bitcheck.Decider = d.backend
			if d.set != nil {
				dec = d.set
			}
			s.run(srcCtx, dec, f.Algorithm, f.Mode, d.cfg.Events, &d.cfg.Capture, d.cfg.InFlight, d.log)
		}()
	}
	serveErr := make(chan error, len(d.listeners))
	for _, l := range d.listeners {
		d.log.Info("API listening", "addr", l.Addr().String())
		go func() { serveErr <- srv.Serve(l) }()
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	flush := time.NewTicker(time.Second)
	defer flush.Stop()

	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-hup:
			if err := d.cfg.Events.Reopen(); err != nil {
				d.log.Error("reopening the event log", "err", err)
			} else {
				d.log.Info("event log reopened")
			}
		case <-flush.C:
			_ = d.cfg.Events.Flush()
		case e := <-serveErr:
			if !errors.Is(e, http.ErrServerClosed) {
				err = e
				break loop
			}
		}
	}
	d.log.Info("shutting down")
	stopSources()
	wg.Wait()
	err = errors.Join(err, d.shutdownAPI(srv, apiSrv, conns), d.cfg.Events.Flush())
	if d.sync != nil {
		err = errors.Join(err, d.sync())
	}
	if d.cfg.Socket != "" {
		os.Remove(d.cfg.Socket)
	}
	return err
}

// shutdownAPI stops the API: requests still receiving their body are
// answered 503 at once, connections with no request being served (idle,
// silent, or still sending a request's head) are closed, and requests
// being decided get the grace to finish; connections still open after it
// are closed. Cutting clients off is not an error.
func (d *Daemon) shutdownAPI(srv *http.Server, apiSrv *api.Server, conns *apiConns) error {
	apiSrv.Drain()
	grace := orDefault(d.cfg.ShutdownTimeout, DefaultShutdownTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		conns.closeWaiting() // again while Shutdown runs: a connection may have been accepted meanwhile
		select {
		case err := <-done:
			if errors.Is(err, context.DeadlineExceeded) {
				d.log.Warn("closing API connections still open after the shutdown grace", "grace", grace)
				err = srv.Close()
			}
			return err
		case <-tick.C:
		}
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
