package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urldedupd/urldedupd/internal/audit"
	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/state"
)

// SourceConfig is one capture source: an interface, read by Workers
// sockets in one AF_PACKET fanout group (flow hash, defragmentation), an
// engine each; its metrics add the workers' figures up.
type SourceConfig struct {
	Iface   string
	BPF     string
	Workers int // sockets and engines; 1 (or 0): one socket, no fanout
}

// source runs one live capture and publishes its figures for metrics.
type source struct {
	cfg    SourceConfig
	worker int // its place among its interface's workers
	live   capture.Source
	up     atomic.Bool
	panics atomic.Uint64 // engines restarted after a panic

	mu        sync.Mutex
	base      capture.Stats // summed figures of engines that panicked
	stats     capture.Stats
	counts    audit.Counts
	undecided uint64 // requests the backend could not decide

	// told are the undecoded reasons already logged (a reason is logged
	// the first time it is published); at most capture.MaxReasons+1 (the
	// lumped ones, as the zero Reason).
	told []capture.Reason
	log  *slog.Logger
}

// snapshot returns the last published figures.
func (s *source) snapshot() (capture.Stats, audit.Counts, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats, s.counts, s.undecided
}

// publish makes an engine's figures, on top of those of the engines before
// it, and the recorder's, the source's.
func (s *source) publish(st capture.Stats, rec *recorder) {
	cnt := rec.Counts()
	s.mu.Lock()
	s.stats, s.counts, s.undecided = addStats(s.base, st), cnt, rec.undecided
	all := s.stats.Reasons
	s.mu.Unlock()
	s.tellUndecoded(&all)
}

// tellUndecoded logs each reason of undecoded frames the first time it is
// met: "frames not decoded" with the reason (link type 127 (IEEE 802.11
// radiotap)) and the count so far.
func (s *source) tellUndecoded(r *capture.Reasons) {
	if s.log == nil {
		return
	}
	tell := func(why capture.Reason, what string, n uint64) {
		if slices.Contains(s.told, why) {
			return
		}
		s.told = append(s.told, why)
		s.log.Warn("frames not decoded", "iface", s.cfg.Iface, "reason", what, "frames", n)
	}
	for _, c := range r.Counts() {
		if c.Undecoded() {
			tell(c.Reason, c.Reason.String(), c.Frames)
		}
	}
	if r.LumpedUndecoded > 0 {
		tell(capture.Reason{}, "further link types or protocols", r.LumpedUndecoded)
	}
}

// restartPause is how long a source waits before it starts a new engine
// after one gave up on repeated panics.
const restartPause = 100 * time.Millisecond

// crashReportEvery is the least time between two log lines about panics
// of one source.
const crashReportEvery = 10 * time.Second

// run captures until ctx ends or the source fails (its interface is gone);
// a failure is logged and marks the source down, and the daemon goes on
// serving. Nothing else ends the capture. A request the backend cannot
// decide is counted (see recorder). A panic while a frame is read or
// handled drops the source's engine (its reassembly state: every
// connection it tracks); the panic is counted and logged, and a new engine
// goes on with the next frame.
func (s *source) run(ctx context.Context, st *state.State, events *EventLog, format audit.Format, opts *capture.Options, log *slog.Logger) {
	if format != audit.NewECS {
		format = audit.NewJSON
	}
	defer s.live.Close()
	signer := st.Signer()
	rec := newRecorder(func() *audit.Log {
		return audit.New(st, signer, events, format, false, audit.LiveOptions(st))
	}, s.cfg.Iface, log)
	s.up.Store(true)
	s.log = log
	log.Info("capture started", "iface", s.cfg.Iface, "bpf", s.cfg.BPF, "worker", s.worker, "workers", max(s.cfg.Workers, 1))
	var (
		runErr     error
		lastReport time.Time
		reported   uint64
	)
	var eng *capture.Engine
	for {
		pipe := audit.NewPipeline(opts, rec, events.Flush)
		eng = pipe.Engine
		eng.Name = s.cfg.Iface
		eng.OnPanic = func(p *capture.PanicError) {
			// The engine dropped the packet's connection and goes on; it
			// counts the panic in its Stats.
			if now := time.Now(); now.Sub(lastReport) >= crashReportEvery {
				log.Error("capture recovered from a panic; capture goes on", "iface", s.cfg.Iface, "err", p, "stack", string(p.Stack))
				lastReport = now
			}
		}
		eng.Tick = func() { s.publish(eng.Stats(), rec) }
		var crash *engineCrash
		crash, runErr = runGuarded(ctx, pipe, s.live)
		if crash == nil && errors.Is(runErr, capture.ErrPanic) && ctx.Err() == nil {
			// The engine gave up after two panics with no frame between
			// them (in the source, or in an idle flush). The interface
			// is still there: start again, after a pause that bounds how
			// fast a fault that persists can spin.
			s.mu.Lock()
			s.base = addStats(s.base, statsAfterCrash(eng))
			s.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(restartPause):
			}
			continue
		}
		if crash == nil {
			break
		}
		s.mu.Lock()
		s.base = addStats(s.base, crash.stats)
		s.mu.Unlock()
		n := s.panics.Add(1)
		if now := time.Now(); now.Sub(lastReport) >= crashReportEvery {
			log.Error("capture: a frame crashed the capture engine; its connections are dropped and a new engine goes on",
				"iface", s.cfg.Iface, "worker", s.worker, "panics", n-reported, "panics_total", n, "panic", crash.value, "stack", crash.stack)
			lastReport, reported = now, n
		}
	}
	if err := rec.Close(); err != nil { // decides and writes what is still queued
		log.Error("capture: the last requests could not be decided", "iface", s.cfg.Iface, "undecided_total", rec.undecided, "err", err)
	}
	eng.Tick()
	s.up.Store(false)
	switch {
	case ctx.Err() != nil:
		st, _, _ := s.snapshot()
		if not := st.Reasons.Describe(); len(not) > 0 {
			log.Info("capture stopped", "iface", s.cfg.Iface, "undecoded_frames", st.Undecoded, "undecoded", strings.Join(not, "; "))
		} else {
			log.Info("capture stopped", "iface", s.cfg.Iface)
		}
	default:
		log.Error("capture failed; the API keeps serving", "iface", s.cfg.Iface, "err", runErr)
	}
}

// engineCrash is a panic recovered from an engine's Run.
type engineCrash struct {
	value string
	stack string
	stats capture.Stats // the engine's figures when it crashed
}

// runGuarded runs pipe on src, turning a panic into an engineCrash.
func runGuarded(ctx context.Context, pipe *audit.Pipeline, src capture.Source) (crash *engineCrash, err error) {
	defer func() {
		if v := recover(); v != nil {
			crash = &engineCrash{value: fmt.Sprint(v), stack: string(debug.Stack())}
			crash.stats = statsAfterCrash(pipe.Engine)
		}
	}()
	return nil, pipe.Run(ctx, src)
}

// statsAfterCrash reads a crashed engine's figures, or none if that panics
// too.
func statsAfterCrash(eng *capture.Engine) (st capture.Stats) {
	defer func() { recover() }()
	return eng.Stats()
}

// addStats adds an engine's counters to those of the engines before it:
// each counter of capture.StatsCounters as its description says (a sum;
// KernelDrops, the source's own running total, the larger), and the
// frames by reason.
func addStats(a, b capture.Stats) capture.Stats {
	capture.StatsCounters().Add(&a, &b)
	a.Reasons.Merge(&b.Reasons)
	return a
}
