package api

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/state"
)

// FrontEndConfig configures the API's front end: the HTTP server around a
// Server, on listeners the caller opened.
type FrontEndConfig struct {
	Listeners []net.Listener
	// Routes are served beside the API's, each behind the token (the
	// daemon's /metrics).
	Routes map[string]http.Handler
	// HeaderTimeout bounds the reading of a request's head, IdleTimeout
	// a kept-alive connection's wait for its next request; MaxHeaderBytes
	// caps a request's head. Zero fields are net/http's defaults.
	HeaderTimeout  time.Duration
	IdleTimeout    time.Duration
	MaxHeaderBytes int
	// Limit caps the connections served at once (it must hold
	// Options.MaxConns slots); nil: a ConnLimit of Options.MaxConns.
	Limit  *frontend.ConnLimit
	Logger *slog.Logger
}

// FrontEnd is the HTTP API as a frontend.FrontEnd.
type FrontEnd struct {
	api       *Server
	srv       *http.Server
	conns     *conns
	limit     *frontend.ConnLimit
	listeners []net.Listener
	log       *slog.Logger
}

var _ frontend.FrontEnd = (*FrontEnd)(nil)

// NewFrontEnd returns the API's front end deciding against st, configured
// by opts (the API's limits) and cfg (the server's).
func NewFrontEnd(st *state.State, opts *Options, cfg *FrontEndConfig) *FrontEnd {
	api := New(st, opts)
	f := &FrontEnd{api: api, limit: cfg.Limit, listeners: cfg.Listeners, log: cfg.Logger}
	if f.limit == nil {
		f.limit = frontend.NewConnLimit(api.opts.MaxConns)
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	h := api.Handler()
	mux.Handle("/v1/", h)
	mux.Handle("/healthz", h)
	for path, rh := range cfg.Routes {
		mux.Handle(path, RequireToken(api.opts.Token, rh))
	}
	f.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: cfg.HeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
	}
	f.conns = newConns()
	f.conns.install(f.srv)
	return f
}

// Name is "api".
func (f *FrontEnd) Name() string { return "api" }

// Server is the API the front end serves.
func (f *FrontEnd) Server() *Server { return f.api }

// Conns is the front end's connection limit.
func (f *FrontEnd) Conns() *frontend.ConnLimit { return f.limit }

// Serve serves on every listener until Shutdown.
func (f *FrontEnd) Serve(ctx context.Context) error {
	errc := make(chan error, len(f.listeners))
	for _, l := range f.listeners {
		f.log.Info("API listening", "addr", l.Addr().String())
		go func() { errc <- f.srv.Serve(f.limit.Listener(l)) }()
	}
	for range f.listeners {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	return nil
}

// Drain answers requests still receiving their body 503 at once, and so
// later ones that send a body (Server.Drain).
func (f *FrontEnd) Drain() { f.api.Drain() }

// Shutdown stops the API: connections with no request being served (idle,
// silent, or still sending a request's head) are closed, and requests
// being decided get until ctx ends to finish; connections still open then
// are closed. Cutting clients off is not an error.
func (f *FrontEnd) Shutdown(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- f.srv.Shutdown(ctx) }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		f.conns.closeWaiting() // again while Shutdown runs: a connection may have been accepted meanwhile
		select {
		case err := <-done:
			if errors.Is(err, context.DeadlineExceeded) {
				grace, _ := frontend.Grace(ctx)
				f.log.Warn("closing API connections still open after the shutdown grace", "grace", grace)
				err = f.srv.Close()
			}
			return err
		case <-tick.C:
		}
	}
}
