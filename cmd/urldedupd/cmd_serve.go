package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/urldedupd/urldedupd/internal/audit"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/urldedupd/urldedupd/internal/api"
	"github.com/urldedupd/urldedupd/internal/daemon"
	"github.com/urldedupd/urldedupd/internal/respserver"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/state"
)

type serveOptions struct {
	config      string
	ifaces      []string
	bpf         string
	workers     int
	events      string
	eventFormat string
	socket      string
	socketMode  fileMode
	listen      string
	allowRemote bool
	token       string
	user        string
	flush       time.Duration
	checkpoint  time.Duration
	maxBatch    int
	reassemblyFlags
	logFormat   string
	maxInflight int64
	bodyTimeout time.Duration
	headTimeout time.Duration
	idleTimeout time.Duration
	grace       time.Duration
	maxConns    int
	respListen  string
	respSocket  string
	respKey     string
	respGo      bool
	respLoops   int
}

func (o *serveOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.config, "config", "", `config file: "flag = value" lines, e.g. "iface = eth1" (flags and $URLDEDUPD_* win)`)
	fs.StringArrayVarP(&o.ifaces, "iface", "i", nil, "capture from this interface (repeatable; none: API only)")
	fs.StringVar(&o.bpf, "bpf", "", "capture filter for every interface, in tcpdump syntax")
	fs.IntVar(&o.workers, "workers", min(runtime.NumCPU(), maxWorkers), "capture each interface with this many workers, each its own socket and engine, joined by AF_PACKET fanout (1: one socket, no fanout)")
	fs.StringVar(&o.events, "events", "-", "event log: first-seen requests as JSON lines (- for stdout); SIGHUP reopens it")
	fs.StringVar(&o.eventFormat, "events-format", "json", "the event log's records: json, or ecs (Elastic Common Schema documents; what replay and capture write with --log-format ecs)")
	fs.StringVar(&o.socket, "socket", "", "Unix socket of the API (default: api.sock in the state directory; \"none\" for none)")
	o.socketMode = 0o660
	fs.Var(&o.socketMode, "socket-mode", "permissions of the Unix sockets, in octal")
	fs.StringVar(&o.listen, "listen", "", "also serve the API on this TCP address (loopback unless --allow-remote)")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow --listen on a non-loopback address (needs --token)")
	fs.StringVar(&o.token, "token", "", "bearer token the API requires (best set as $URLDEDUPD_TOKEN)")
	fs.StringVar(&o.user, "user", "", "switch to this user after opening the capture sockets and listeners; the socket is given to it and its group")
	fs.DurationVar(&o.flush, "flush-interval", time.Second, "sync the state to disk this often (what a power loss can take): the journal of the URLs answered new, or the shards at a checkpoint")
	fs.DurationVar(&o.checkpoint, "checkpoint-interval", state.DefaultCheckpoint, "sync the shards themselves this often (or when the journal reaches 64 MiB); 0: keep no journal and sync the shards at every flush (windowed layouts always do)")
	fs.IntVar(&o.maxBatch, "max-batch", api.DefaultMaxBatch, "most URLs in one API batch")
	fs.Int64Var(&o.maxInflight, "max-inflight-bytes", api.DefaultMaxInflightBytes, "bytes of API request bodies held at once, 40 more per URL of a batch (beyond: 503 with Retry-After); a fifth is kept in equal shares, one per --max-conns connection, for each request's first bytes; one body is at most the other 4/5")
	fs.DurationVar(&o.bodyTimeout, "body-timeout", api.DefaultBodyTimeout, "time for a client to send a request body (beyond: 408, connection closed)")
	fs.DurationVar(&o.headTimeout, "header-timeout", daemon.DefaultHeaderTimeout, "time for a client to send a request's head (beyond: connection closed)")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", daemon.DefaultIdleTimeout, "close a kept-alive API connection idle this long")
	fs.IntVar(&o.maxConns, "max-conns", daemon.DefaultMaxConns, "API connections open at once, over the socket and --listen (beyond: new ones wait in the kernel's listen backlog)")
	fs.StringVar(&o.respListen, "resp-listen", "", "also serve the Redis protocol (BF.ADD, BF.MADD, …) on this TCP address (loopback unless --allow-remote; AUTH with --token)")
	fs.StringVar(&o.respSocket, "resp-socket", "", "also serve the Redis protocol on this Unix socket (mode --socket-mode)")
	fs.StringVar(&o.respKey, "resp-default-key", respserver.DefaultKey, "the Redis-protocol key whose items are signed as filter, the sensor and the API sign URLs (other keys are namespaces of their own)")
	fs.IntVar(&o.respLoops, "resp-loops", 0, "event loops serving the Redis-protocol connections (0: one for every two processors); more use more processors for big BF.MADD batches, at some cost to single commands")
	fs.BoolVar(&o.respGo, "resp-goroutines", false, "serve each Redis-protocol connection from a goroutine of its own rather than from the event loop (epoll): fewer single commands a second; kept to compare")
	fs.DurationVar(&o.grace, "shutdown-grace", daemon.DefaultShutdownTimeout, "on SIGTERM, time for API requests being decided to finish before connections are closed")
	o.reassemblyFlags.AddFlags(fs)
	fs.StringVar(&o.logFormat, "log-format", "auto", "log format on stderr: text, json, or auto (text on a terminal)")
}

func newServeCommand(g *globalOptions) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Run the daemon: capture sources, the local API and metrics over one state",
		Long: `Run until SIGINT or SIGTERM:
  - capture from each --iface (with --bpf), writing each request whose URL is
    new to the event log (--events) as a JSON line; SIGHUP reopens the log
    for logrotate (if the new file cannot be opened, the old one is kept).
    A record that cannot be written is counted, and capture goes on. A
    source that fails (interface gone) is logged and its
    urldedupd_source_up metric drops to 0; the API keeps serving;
  - serve the API over HTTP/1.1 on a Unix socket (--socket, mode 0660) and
    optionally TCP (--listen): POST /v1/check (a batch, text lines or a JSON
    array; ?dry_run=1 only tests), GET /v1/check?url=U, GET /v1/stats,
    GET /healthz, and Prometheus metrics on GET /metrics;
  - with --resp-listen or --resp-socket, serve the Redis protocol (RESP2 and
    RESP3) for crawlers: BF.ADD key url (1 new, 0 seen), BF.MADD, BF.EXISTS,
    BF.MEXISTS, BF.INFO, BF.CARD, PING, HELLO, AUTH --token, CLIENT, QUIT,
    COMMAND; a pipelined burst is decided as one batch. Items of the key
    --resp-default-key are signed as the API signs URLs; any other key is a
    namespace of its own. Its limits and timeouts are the API's.
On SIGINT/SIGTERM it stops the sources, answers 503 to requests still
receiving their body, gives requests being decided --shutdown-grace to
finish, closes the remaining connections, syncs the state and exits 0.

API limits: request bodies held at once (--max-inflight-bytes; beyond it,
503 with Retry-After), the time to send a request's head (--header-timeout)
and its body (--body-timeout; 408), idle kept-alive connections
(--idle-timeout), and connections open at once (--max-conns; beyond it, new
ones wait to be accepted).

Configuration, highest precedence first: flags; environment variables
URLDEDUPD_<FLAG> (upper case, dashes as underscores: URLDEDUPD_IFACE,
URLDEDUPD_TOKEN, URLDEDUPD_DIR); a config file (--config) of
"flag = value" lines, a repeated name for a repeatable flag:

    dir = /var/lib/urldedupd
    iface = eth1
    iface = eth2
    bpf = tcp port 80 or tcp port 8080
    proto = http,tls,quic,h2c
    events = /var/log/urldedupd/events.jsonl

The API binds to the Unix socket and loopback only; a non-loopback --listen
needs --allow-remote and --token.`,
		Example: `  urldedupd serve --iface eth1 --events /var/log/urldedupd/events.jsonl
  urldedupd serve --socket /run/urldedupd/api.sock          # API only
  curl --unix-socket /run/urldedupd/api.sock --data-binary @urls.txt http://x/v1/check`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyEnvAndConfig(cmd.Flags(), o.config); err != nil {
				return err
			}
			return runServe(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func newLogger(format string) *slog.Logger {
	if format == "text" || format == "auto" && isTerminal(os.Stderr) {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, nil))
}

func runServe(ctx context.Context, g *globalOptions, o *serveOptions) (err error) {
	log := newLogger(o.logFormat)
	capOpts, err := o.reassemblyFlags.engineOptions()
	if err != nil {
		return err
	}
	cfg := daemon.Config{
		Capture: capOpts,
		Socket:  o.socket, SocketMode: os.FileMode(o.socketMode),
		Listen: o.listen, AllowRemote: o.allowRemote, Token: o.token,
		RESPListen: o.respListen, RESPSocket: o.respSocket, RESP: respserver.Options{DefaultKey: o.respKey, Goroutines: o.respGo, Loops: o.respLoops},
		API:           api.Options{MaxBatch: o.maxBatch, MaxInflightBytes: o.maxInflight, BodyTimeout: o.bodyTimeout},
		HeaderTimeout: o.headTimeout, IdleTimeout: o.idleTimeout, ShutdownTimeout: o.grace, MaxConns: o.maxConns,
		Logger: log,
	}
	if err := checkBackend(g.backend); err != nil {
		return err
	}
	if cfg.Socket == "" && g.backend != "" {
		return usageError(errors.New("with --backend there is no state directory for the socket: give --socket PATH (or none with --listen)"))
	}
	switch cfg.Socket {
	case "":
		cfg.Socket = filepath.Join(g.dir, "api.sock")
	case "none":
		cfg.Socket = ""
	}
	if o.workers < 1 || o.workers > maxWorkers {
		return usageError(fmt.Errorf("--workers %d: not in 1..%d", o.workers, maxWorkers))
	}
	if o.respLoops < 0 || o.respLoops > maxWorkers {
		return usageError(fmt.Errorf("--resp-loops %d: not in 0..%d", o.respLoops, maxWorkers))
	}
	for _, i := range o.ifaces {
		cfg.Sources = append(cfg.Sources, daemon.SourceConfig{Iface: i, BPF: o.bpf, Workers: o.workers})
	}
	if o.user != "" {
		if cfg.SocketOwner, err = daemon.LookupUser(o.user); err != nil {
			return usageError(userError(o.user, err))
		}
	}
	if o.maxConns < 1 {
		return usageError(fmt.Errorf("--max-conns %d: want at least 1", o.maxConns))
	}
	switch o.eventFormat {
	case "json":
		cfg.EventFormat = audit.NewJSON
	case "ecs":
		cfg.EventFormat = audit.NewECS
	default:
		return usageError(fmt.Errorf("--events-format %q: not json or ecs", o.eventFormat))
	}
	// A configuration that cannot work is refused before the state, the
	// event log or any socket is opened.
	if err := cfg.Check(); err != nil {
		return usageError(configError(&cfg, err))
	}

	if g.backend == "" && !stateExists(g.dir) {
		// Seconds of writing zeros (512 MiB for the bitmap), before the
		// sources and the API open: said, so the wait is not a mystery.
		log.Info("creating state", "dir", g.dir)
	}
	if o.checkpoint < 0 {
		return usageError(fmt.Errorf("--checkpoint-interval %v: want 0 (no journal) or more", o.checkpoint))
	}
	checkpoint := o.checkpoint
	if checkpoint == 0 {
		checkpoint = -1 // state.Options: negative keeps no journal
	}
	st, err := openState(ctx, g, state.Options{Create: true, Checkpoint: checkpoint, Local: shardfile.Options{FlushInterval: o.flush, Populate: true}})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	if cfg.Events, err = daemon.OpenEventLog(o.events); err != nil {
		return err
	}
	d, err := daemon.New(st, cfg)
	if err != nil {
		switch {
		case errors.Is(err, daemon.ErrRESP):
			err = reworded(err, "--resp-listen/--resp-socket: %v", errors.Unwrap(err))
		case errors.Is(err, daemon.ErrSocketPathTaken) || errors.Is(err, daemon.ErrSocketInUse):
			err = fmt.Errorf("--socket: %w", err)
		}
		return errors.Join(err, cfg.Events.Discard())
	}
	defer func() { err = errors.Join(err, cfg.Events.Close()) }()
	if u := cfg.SocketOwner; u != nil {
		if err := daemon.DropPrivileges(u); err != nil {
			d.Close()
			return userError(u.Name, err)
		}
		log.Info("privileges dropped", "user", u.Name)
	}
	return d.Run(ctx)
}

// configError words an error of daemon.Config.Check as the flags that
// caused it.
func configError(cfg *daemon.Config, err error) error {
	flag, addr := "--listen", cfg.Listen
	if errors.Is(err, daemon.ErrRESP) {
		flag, addr = "--resp-listen", cfg.RESPListen
		err = errors.Unwrap(err)
	}
	switch {
	case errors.Is(err, daemon.ErrNothingToServe):
		return reworded(err, "--socket none with no --listen, --resp-listen, --resp-socket or --iface: %v", daemon.ErrNothingToServe)
	case errors.Is(err, daemon.ErrRemoteNeedsFlag):
		return reworded(err, "%s %s: listening on a non-loopback address needs --allow-remote", flag, addr)
	case errors.Is(err, daemon.ErrRemoteNeedsToken):
		return reworded(err, "%s %s: %v", flag, addr, daemon.ErrRemoteNeedsToken)
	case errors.Is(err, daemon.ErrSocketPathTooLong) && flag == "--resp-listen":
		return fmt.Errorf("--resp-socket: %w", err)
	case errors.Is(err, daemon.ErrSocketPathTooLong):
		return fmt.Errorf("--socket: %w", err)
	}
	return reworded(err, "%s %q: %v", flag, addr, errors.Unwrap(err))
}

// userError words an error of daemon.LookupUser or DropPrivileges, "daemon:
// user NAME: why", as the flag: "--user NAME: why".
func userError(name string, err error) error {
	return reworded(err, "--user %s: %v", name, errors.Unwrap(err))
}
