package daemon

import (
	"log/slog"
	"time"

	"github.com/urldedupd/urldedupd/internal/metrics"
	"github.com/urldedupd/urldedupd/internal/shardfile"
)

// flushReportEvery is how often a flush that keeps failing, or keeps
// taking longer than its interval, is logged again.
const flushReportEvery = time.Minute

// flushReport logs what the state's background flush does that an
// operator must know: a flush failed (the bits set since the last good
// one are not on disk; a power loss would make their URLs new again), it
// works again, or it takes longer than --flush-interval (a power loss can
// then take more than that interval).
type flushReport struct {
	failures uint64 // failures reported so far
	failing  bool
	failLog  time.Time
	slowLog  time.Time
}

func (r *flushReport) check(dir *shardfile.Dir, log *slog.Logger, now time.Time) {
	if dir != nil {
		r.report(dir.Path(), dir.FlushStats(), log, now)
	}
}

// report logs what f, the flush figures of the state in dir, says since
// the last report.
func (r *flushReport) report(dir string, f shardfile.FlushStats, log *slog.Logger, now time.Time) {
	if f.Interval <= 0 {
		return
	}
	if f.Failures > r.failures && (!r.failing || now.Sub(r.failLog) >= flushReportEvery) {
		log.Error("state: flush failed: what was decided since the last good flush is not on disk, and a power loss would make those URLs new again; serving goes on",
			"dir", dir, "failures", f.Failures-r.failures, "last_ok", f.LastOK, "err", f.LastFailure)
		r.failures, r.failing, r.failLog = f.Failures, true, now
	}
	if r.failing && f.Err == nil {
		log.Info("state: flushing again", "dir", dir, "failures_total", f.Failures)
		r.failures, r.failing = f.Failures, false
	}
	if f.Err == nil && f.Last > f.Interval && now.Sub(r.slowLog) >= flushReportEvery {
		log.Warn("state: a flush took longer than --flush-interval: a power loss can take more than that interval (docs/operations.md, \"The journal: what a flush writes\")",
			"dir", dir, "took", f.Last.Round(time.Millisecond).String(), "interval", f.Interval.String())
		r.slowLog = now
	}
}

// collectFlush exports the background flush's figures, for a state in a
// directory flushed by serve.
func (c *collector) collectFlush(w *metrics.Writer) {
	dir := c.d.state.Dir()
	if dir == nil {
		return
	}
	f := dir.FlushStats()
	if f.Interval <= 0 {
		return
	}
	w.Family("urldedupd_state_flushes_total", metrics.Counter, "Background flushes of the state (its journal written and synced, or every shard synced at a checkpoint) by result: ok, error.")
	w.Sample("urldedupd_state_flushes_total", float64(f.Flushes-f.Failures), "result", "ok")
	w.Sample("urldedupd_state_flushes_total", float64(f.Failures), "result", "error")
	w.Family("urldedupd_state_flush_duration_seconds", metrics.Gauge, "How long the last background flush took.")
	w.Sample("urldedupd_state_flush_duration_seconds", f.Last.Seconds())
	w.Family("urldedupd_state_flush_interval_seconds", metrics.Gauge, "The configured flush interval (--flush-interval).")
	w.Sample("urldedupd_state_flush_interval_seconds", f.Interval.Seconds())
	ok := 0.0
	if !f.LastOK.IsZero() {
		ok = float64(f.LastOK.UnixNano()) / 1e9
	}
	w.Family("urldedupd_state_last_flush_success_timestamp_seconds", metrics.Gauge, "When the last successful flush began (Unix time; 0 before the first): every URL decided before it is on disk.")
	w.Sample("urldedupd_state_last_flush_success_timestamp_seconds", ok)
	c.collectJournal(w)
}

// collectJournal exports the journal's figures, for a state flushed
// through one.
func (c *collector) collectJournal(w *metrics.Writer) {
	j, ok := c.d.state.JournalStats()
	if !ok {
		return
	}
	w.Family("urldedupd_state_journal_bytes", metrics.Gauge, "Bytes of serve's journal since its last checkpoint: what a replay after a crash would read (8 bytes a URL answered new).")
	w.Sample("urldedupd_state_journal_bytes", float64(j.Bytes))
	w.Family("urldedupd_state_checkpoints_total", metrics.Counter, "Checkpoints of the journal (every shard synced, the journal emptied) by result: ok, error.")
	w.Sample("urldedupd_state_checkpoints_total", float64(j.Checkpoints-j.Failures), "result", "ok")
	w.Sample("urldedupd_state_checkpoints_total", float64(j.Failures), "result", "error")
	w.Family("urldedupd_state_checkpoint_interval_seconds", metrics.Gauge, "The configured checkpoint interval (--checkpoint-interval).")
	w.Sample("urldedupd_state_checkpoint_interval_seconds", j.Interval.Seconds())
	w.Family("urldedupd_state_last_checkpoint_success_timestamp_seconds", metrics.Gauge, "When the last successful checkpoint began, or serve opened the state (Unix time): every URL decided before it is in the shards on disk.")
	w.Sample("urldedupd_state_last_checkpoint_success_timestamp_seconds", float64(j.LastOK.UnixNano())/1e9)
}
