package daemon

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/urldedupd/urldedupd/pkg/audit"
	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/capture"
	"github.com/urldedupd/urldedupd/pkg/signature"
)

// SourceConfig is one capture source.
type SourceConfig struct {
	Iface string
	BPF   string
}

// source runs one live capture and publishes its figures for metrics.
type source struct {
	cfg  SourceConfig
	live *capture.LiveSource
	up   atomic.Bool

	mu     sync.Mutex
	stats  capture.Stats
	counts audit.Counts
}

// snapshot returns the last published figures.
func (s *source) snapshot() (capture.Stats, audit.Counts) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats, s.counts
}

// run captures until ctx ends or the source fails; a failure is logged and
// marks the source down, and the daemon goes on serving.
func (s *source) run(ctx context.Context, dec bitcheck.Decider, f signature.Algorithm, m signature.Mode,
	events *EventLog, opts *capture.Options, inFlight int, log *slog.Logger) {
	defer s.live.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	alog := audit.New(dec, signature.NewSigner(f, m), events, audit.NewJSON, false, &audit.Options{InFlight: inFlight})
	// The event log takes every record (it counts those it cannot write),
	// so only a decision that failed (Redis down) ends the audit log, and
	// with it this source.
	alog.OnError = func(error) { cancel() }
	eng := capture.NewEngine(opts, alog.Request)
	eng.Idle = func() { alog.Flush(); _ = events.Flush() }
	eng.Tick = func() {
		st := eng.Stats()
		s.mu.Lock()
		s.stats, s.counts = st, alog.Counts
		s.mu.Unlock()
	}
	s.up.Store(true)
	log.Info("capture started", "iface", s.cfg.Iface, "bpf", s.cfg.BPF)
	runErr := eng.Run(ctx, s.live)
	logErr := alog.Close() // decides and writes what is still queued
	eng.Tick()
	s.up.Store(false)
	switch {
	case logErr != nil:
		log.Error("capture failed; the API keeps serving", "iface", s.cfg.Iface, "err", logErr)
	case ctx.Err() != nil:
		log.Info("capture stopped", "iface", s.cfg.Iface)
	default:
		log.Error("capture failed; the API keeps serving", "iface", s.cfg.Iface, "err", runErr)
	}
}
