package daemon

import (
	"context"
	"errors"
	"fmt"
	"github.com/urldedupd/urldedupd/internal/audit"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/urldedupd/urldedupd/internal/api"
	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/respserver"
	"github.com/urldedupd/urldedupd/internal/state"
)

// Config configures a Daemon.
type Config struct {
	Sources []SourceConfig
	Capture capture.Options
	// Events is where first-seen requests go, as JSON lines.
	Events *EventLog
	// EventFormat is how they are written: audit.NewJSON (the zero value
	// means it) or audit.NewECS.
	EventFormat audit.Format
	// Socket is the Unix socket of the API ("" for none), created with
	// SocketMode (0660 when zero).
	Socket     string
	SocketMode os.FileMode
	// SocketOwner, when set, owns the socket (its uid and primary gid):
	// the user serve drops to, so that it and its group can connect.
	SocketOwner *User
	// Listen is an optional TCP address for the API. A non-loopback one
	// needs AllowRemote and Token.
	Listen      string
	AllowRemote bool
	Token       string
	API         api.Options
	// RESPListen and RESPSocket are where the RESP front end listens (a
	// TCP address, a Unix socket; "" for neither: no RESP front end). The
	// socket takes SocketMode and SocketOwner; a non-loopback RESPListen
	// needs AllowRemote and Token, as Listen does. RESP configures it
	// (its key, its item limits); its Token, MaxConns, MaxInflightBytes,
	// timeouts and Observe are set from this Config (Token, MaxConns,
	// API.MaxInflightBytes, IdleTimeout, API.BodyTimeout, the metrics).
	RESPListen string
	RESPSocket string
	RESP       respserver.Options
	// HeaderTimeout bounds the reading of a request's head (zero: 10
	// seconds); IdleTimeout closes a kept-alive connection that sends no
	// next request (zero: 60 seconds). Bodies are bounded by
	// API.BodyTimeout.
	HeaderTimeout time.Duration
	IdleTimeout   time.Duration
	// MaxConns caps the API connections open at once across the listeners
	// (zero: DefaultMaxConns). Beyond it a new connection waits in the
	// kernel's listen backlog until one closes.
	MaxConns int
	// ShutdownTimeout is the grace given at shutdown to requests whose body
	// has arrived (zero: 5 seconds); connections still open after it are
	// closed. Requests still receiving their body are answered 503 at once.
	ShutdownTimeout time.Duration
	Logger          *slog.Logger
}

// Defaults of Config, and the cap on a request's head: enough for a GET
// of a maximal URL percent-encoded, far from net/http's 1 MiB. A
// connection costs about 10 KiB of RssAnon while it idles and about
// 0.65 MiB while it holds a maximal head unfinished (the head, grown by
// doubling, net/http's buffers and the collector's slack; measured with
// 400 such connections): DefaultMaxConns connections doing that at once
// hold about 650 MiB, for at most the header timeout.
const (
	DefaultHeaderTimeout   = 10 * time.Second
	DefaultIdleTimeout     = 60 * time.Second
	DefaultShutdownTimeout = 5 * time.Second
	DefaultMaxConns        = 1024
	MaxHeaderBytes         = 256 << 10
)

// Errors of New.
var (
	ErrRemoteNeedsFlag  = frontend.ErrRemoteNeedsFlag
	ErrRemoteNeedsToken = frontend.ErrRemoteNeedsToken
	ErrSocketInUse      = errors.New("socket is in use by a running process")
	// ErrSocketPathTaken is returned when the socket path is a file,
	// directory or anything else that is not a socket.
	ErrSocketPathTaken = errors.New("exists and is not a socket")
	// ErrSocketPathTooLong is returned for a socket path longer than a
	// Unix socket address holds.
	ErrSocketPathTooLong = fmt.Errorf("path longer than the %d bytes a Unix socket address holds", maxSocketPath)
	// ErrNothingToServe is returned for a configuration with no socket,
	// no listener and no capture source: a daemon that would serve nothing.
	ErrNothingToServe = errors.New("nothing to serve: no socket, no listener and no capture source")
	// ErrRESP marks an error of the RESP front end's listeners
	// (RESPListen, RESPSocket), beside the error itself.
	ErrRESP = errors.New("resp")
)

// Daemon is a configured `serve`: its sockets are open, so privileges can
// be dropped before Run.
type Daemon struct {
	cfg       Config
	state     *state.State
	afterSync func() error // tests: called at shutdown after the state is synced
	sources   []*source
	listeners []net.Listener
	socket    os.FileInfo // the socket file as made, so that exit removes it and no other
	resp      []net.Listener
	respSock  os.FileInfo // the RESP socket file as made
	metrics   *daemonMetrics
	log       *slog.Logger
	limits    []*frontend.ConnLimit // the front ends' connection limits
}

// New opens the capture sources and the listeners. The API and the
// capture sources decide against st (capture sources each request at once
// or in batches, as st's InFlight says); Run syncs st at shutdown. The
// caller keeps st open until Run returns, and closes it.
// A configuration Check refuses comes back before anything is opened; on
// any other error New closes what it opened.
func New(st *state.State, cfg Config) (*Daemon, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	d := &Daemon{cfg: cfg, state: st, log: cfg.Logger}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if err := d.open(); err != nil {
		d.Close()
		return nil, err
	}
	d.metrics = newMetrics(d)
	return d, nil
}

// open opens the capture sources, then the Unix socket, then the TCP
// listener.
func (d *Daemon) open() error {
	cfg := &d.cfg
	for i, sc := range cfg.Sources {
		opts := &capture.LiveOptions{BPF: sc.BPF}
		if sc.Workers > 1 { // a fanout group per interface: IDs differ between interfaces and processes
			opts.Fanout = capture.FanoutID() + uint16(i)
		}
		for w := range max(sc.Workers, 1) {
			live, err := capture.OpenLive(sc.Iface, opts)
			if err != nil {
				return err
			}
			d.sources = append(d.sources, &source{cfg: sc, worker: w, live: live})
		}
	}
	if cfg.Socket != "" {
		l, err := listenUnix(cfg.Socket, cfg.SocketMode, cfg.SocketOwner)
		if err != nil {
			return err
		}
		d.listeners = append(d.listeners, l)
		d.socket, _ = os.Lstat(cfg.Socket)
		if u := cfg.SocketOwner; u != nil && !canUnlinkIn(filepath.Dir(cfg.Socket), u) {
			d.log.Warn("the socket's directory is not writable by the user to switch to: the socket will stay after exit (the next start replaces it)",
				"socket", cfg.Socket, "user", u.Name)
		}
	}
	if cfg.Listen != "" {
		l, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			return fmt.Errorf("daemon: listen %s: %w", cfg.Listen, err)
		}
		d.listeners = append(d.listeners, l)
	}
	if cfg.RESPSocket != "" {
		l, err := listenUnix(cfg.RESPSocket, cfg.SocketMode, cfg.SocketOwner)
		if err != nil {
			return respError{err}
		}
		d.resp = append(d.resp, l)
		d.respSock, _ = os.Lstat(cfg.RESPSocket)
	}
	if cfg.RESPListen != "" {
		l, err := net.Listen("tcp", cfg.RESPListen)
		if err != nil {
			return respError{fmt.Errorf("daemon: listen %s: %w", cfg.RESPListen, err)}
		}
		d.resp = append(d.resp, l)
	}
	return nil
}

// Check reports a configuration that can never work: nothing to serve, a Listen that is not
// host:port with a port number or service name, a non-loopback one without AllowRemote and Token, a Socket
// path too long. New calls it first; a caller may call it before opening
// anything else.
func (c *Config) Check() error {
	if c.Socket == "" && c.Listen == "" && c.RESPListen == "" && c.RESPSocket == "" && len(c.Sources) == 0 {
		return fmt.Errorf("daemon: %w", ErrNothingToServe)
	}
	if c.Listen != "" {
		if err := checkListen(c); err != nil {
			return err
		}
	}
	if len(c.Socket) > maxSocketPath {
		return fmt.Errorf("daemon: socket %s: %w", c.Socket, ErrSocketPathTooLong)
	}
	if c.RESPListen != "" {
		if err := frontend.CheckListen(c.RESPListen, c.AllowRemote, c.Token); err != nil {
			return respError{err}
		}
	}
	if len(c.RESPSocket) > maxSocketPath {
		return respError{fmt.Errorf("daemon: socket %s: %w", c.RESPSocket, ErrSocketPathTooLong)}
	}
	return nil
}

func checkListen(cfg *Config) error {
	return frontend.CheckListen(cfg.Listen, cfg.AllowRemote, cfg.Token)
}

// Close closes the sources and listeners New opened (a listener's close
// removes its socket file): for a start-up that fails after New. Run
// closes everything itself.
func (d *Daemon) Close() {
	for _, s := range d.sources {
		s.live.Close()
	}
	for _, l := range d.listeners {
		l.Close()
	}
	for _, l := range d.resp {
		l.Close()
	}
}

// Run serves until ctx ends: then it stops the sources, drains and shuts
// down the front ends (requests being decided get ShutdownTimeout; slow
// clients are cut off, which is not an error), flushes the event log and
// syncs the state. SIGHUP reopens the event log. Run by systemd with
// Type=notify, it says READY=1 once serving and STOPPING=1 when it stops.
func (d *Daemon) Run(ctx context.Context) error {
	fes := d.frontEnds()
	srcCtx, stopSources := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); releaseMemory(srcCtx, d.connCounts) }()
	for _, s := range d.sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(srcCtx, d.state, d.cfg.Events, d.cfg.EventFormat, &d.cfg.Capture, d.log)
		}()
	}
	serveErr := make(chan error, len(fes))
	for _, fe := range fes {
		go func() {
			if err := fe.Serve(ctx); err != nil {
				serveErr <- fmt.Errorf("%s: %w", fe.Name(), err)
			}
		}()
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// Every socket is open, the state mapped, the sources started (and
	// privileges dropped, by the caller): the service is up.
	if err := notify("READY=1\nSTATUS=serving"); err != nil {
		d.log.Warn("service manager not told the daemon is ready", "err", err)
	}
	flush := time.NewTicker(time.Second)
	defer flush.Stop()
	var eventsReport eventLogReport
	var flushes flushReport

	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-hup:
			if err := d.cfg.Events.Reopen(); err != nil {
				d.log.Error("event log not reopened: writing on to the old file; the next SIGHUP tries again", "err", err)
			} else {
				d.log.Info("event log reopened")
			}
		case now := <-flush.C:
			_ = d.cfg.Events.Flush()
			eventsReport.check(d.cfg.Events, d.log, now)
			flushes.check(d.state.Dir(), d.log, now)
		case err = <-serveErr:
			break loop
		}
	}
	d.log.Info("shutting down")
	_ = notify("STOPPING=1")
	stopSources()
	wg.Wait()
	err = errors.Join(err, d.shutdown(fes), d.cfg.Events.Flush())
	err = errors.Join(err, d.state.Sync())
	if d.afterSync != nil {
		err = errors.Join(err, d.afterSync())
	}
	d.removeSocket(d.cfg.Socket, d.socket)
	d.removeSocket(d.cfg.RESPSocket, d.respSock)
	return err
}

// respError is an error of the RESP front end's listeners: ErrRESP, and
// the error itself (Unwrap).
type respError struct{ err error }

func (e respError) Error() string        { return "resp: " + e.err.Error() }
func (e respError) Unwrap() error        { return e.err }
func (e respError) Is(target error) bool { return target == ErrRESP }

// removeSocket removes the socket made at path, if it is still there.
// Closing the listener removed it, unless --user may not write its
// directory (New warned then). A socket at the path now may be another
// serve's, started since: only ours is removed.
func (d *Daemon) removeSocket(path string, made os.FileInfo) {
	if path == "" {
		return
	}
	if fi, e := os.Lstat(path); e == nil && sameSocket(fi, made) {
		if e := os.Remove(path); e != nil && !errors.Is(e, fs.ErrNotExist) {
			d.log.Warn("socket not removed", "socket", path, "err", e)
		}
	}
}

// frontEnds makes the daemon's front ends, each on the listeners New
// opened for it. To add a front end: its package, its listeners in open,
// and one line here.
func (d *Daemon) frontEnds() []frontend.FrontEnd {
	fes := []frontend.FrontEnd{d.apiFrontEnd()}
	if len(d.resp) > 0 {
		fes = append(fes, d.respFrontEnd())
	}
	return fes
}

// respFrontEnd is the RESP server, with the API's token, limits and
// timeouts (a connection limit and an in-flight budget of its own, of the
// same sizes), its metrics urldedupd_resp_*.
func (d *Daemon) respFrontEnd() *respserver.FrontEnd {
	opts := d.cfg.RESP
	opts.Token = d.cfg.Token
	opts.MaxConns = d.cfg.MaxConns
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.MaxInflightBytes <= 0 {
		opts.MaxInflightBytes = d.cfg.API.MaxInflightBytes
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = orDefault(d.cfg.IdleTimeout, DefaultIdleTimeout)
	}
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = d.cfg.API.BodyTimeout
	}
	limit := frontend.NewConnLimit(opts.MaxConns)
	var m *frontend.Metrics // made once the budget is: before any connection
	opts.Observe = func(op, status string, dur time.Duration, nNew, nDup int) { m.Observe(op, status, dur, nNew, nDup) }
	fe := respserver.New(d.state, &opts, &respserver.Config{Listeners: d.resp, Limit: limit, Logger: d.log})
	m = frontend.NewMetrics("resp", "RESP", "command", "status", limit, fe.Budget())
	m.Register(d.metrics.reg)
	d.limits = append(d.limits, limit)
	return fe
}

// apiFrontEnd is the HTTP API, with the metrics at /metrics.
func (d *Daemon) apiFrontEnd() *api.FrontEnd {
	apiOpts := d.cfg.API
	apiOpts.Token = d.cfg.Token
	apiOpts.Observe = d.metrics.observe
	apiOpts.MaxConns = d.cfg.MaxConns // a share of the in-flight bytes is kept for each connection
	if apiOpts.MaxConns <= 0 {
		apiOpts.MaxConns = DefaultMaxConns
	}
	limit := frontend.NewConnLimit(apiOpts.MaxConns)
	fe := api.NewFrontEnd(d.state, &apiOpts, &api.FrontEndConfig{
		Listeners:      d.listeners,
		Routes:         map[string]http.Handler{"/metrics": d.metrics.reg},
		HeaderTimeout:  orDefault(d.cfg.HeaderTimeout, DefaultHeaderTimeout),
		IdleTimeout:    orDefault(d.cfg.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes: MaxHeaderBytes,
		Limit:          limit,
		Logger:         d.log,
	})
	d.metrics.watchAPI(fe.Server())
	d.metrics.watchConns(limit)
	d.limits = append(d.limits, limit)
	return fe
}

// connCounts sums the front ends' connections open now and their peaks.
func (d *Daemon) connCounts() (now, peak int) {
	for _, l := range d.limits {
		n, p := l.Counts()
		now, peak = now+n, peak+p
	}
	return now, peak
}

// shutdown drains every front end, then shuts them down together within
// the grace.
func (d *Daemon) shutdown(fes []frontend.FrontEnd) error {
	for _, fe := range fes {
		fe.Drain()
	}
	ctx, cancel := frontend.WithGrace(context.Background(), orDefault(d.cfg.ShutdownTimeout, DefaultShutdownTimeout))
	defer cancel()
	errs := make([]error, len(fes))
	var wg sync.WaitGroup
	for i, fe := range fes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fe.Shutdown(ctx); err != nil {
				errs[i] = fmt.Errorf("%s: %w", fe.Name(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sameSocket reports whether fi is the socket file made: the same inode,
// and the same time of change (an inode freed by the listener's close may
// be reused at once for another socket).
func sameSocket(fi, made os.FileInfo) bool {
	return made != nil && os.SameFile(fi, made) && fi.ModTime().Equal(made.ModTime())
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
