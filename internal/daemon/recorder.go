package daemon

import (
	"log/slog"
	"time"

	"github.com/urldedupd/urldedupd/internal/audit"
	"github.com/urldedupd/urldedupd/internal/capture"
)

// recorder decides a capture source's requests through an audit log. A
// decision that fails (the backend is down) ends an audit log for good;
// the recorder then counts the requests that log could not decide, says
// so (at most every undecidedReportEvery), and goes on with a new audit
// log, so that capture never stops for the backend. Not safe for
// concurrent use: it runs in the source's goroutine.
type recorder struct {
	newLog func() *audit.Log
	log    *audit.Log
	done   audit.Counts // decided by audit logs that failed
	// undecided counts requests no audit log could decide.
	undecided uint64

	iface      string
	logger     *slog.Logger
	lastReport time.Time
	reported   uint64
}

// undecidedReportEvery is the least time between two log lines about
// requests a source could not decide.
const undecidedReportEvery = 10 * time.Second

func newRecorder(newLog func() *audit.Log, iface string, logger *slog.Logger) *recorder {
	return &recorder{newLog: newLog, log: newLog(), iface: iface, logger: logger}
}

// Request is the emit function for the source's engine.
func (r *recorder) Request(req *capture.Request) {
	if r.log.Err() != nil {
		r.restart()
	}
	r.log.Request(req)
}

// Flush writes what has been decided, for when the input pauses.
func (r *recorder) Flush() { r.FlushWith(nil) }

// FlushWith flushes, then calls out (the event log's flush) under the
// audit log's lock.
func (r *recorder) FlushWith(out func() error) {
	r.log.FlushWith(out)
	if r.log.Err() != nil {
		r.restart()
	}
}

// restart closes a failed audit log, counts what it left undecided and
// starts a new one.
func (r *recorder) restart() {
	err := r.log.Close()
	c := r.log.Counts
	r.undecided += c.Requests - c.New - c.Dup
	r.done = addCounts(r.done, c)
	r.log = r.newLog()
	if now := time.Now(); now.Sub(r.lastReport) >= undecidedReportEvery {
		r.logger.Error("capture: requests could not be decided (their URLs are not recorded); capture goes on",
			"iface", r.iface, "undecided", r.undecided-r.reported, "undecided_total", r.undecided, "err", err)
		r.lastReport, r.reported = now, r.undecided
	}
}

// Counts returns the requests decided so far, by every audit log.
func (r *recorder) Counts() audit.Counts { return addCounts(r.done, r.log.CountsNow()) }

// Close decides and writes what is still queued. Its error is that of a
// last decision that failed; those requests are counted undecided.
func (r *recorder) Close() error {
	err := r.log.Close()
	if err != nil {
		c := r.log.Counts
		r.undecided += c.Requests - c.New - c.Dup
	}
	return err
}

func addCounts(a, b audit.Counts) audit.Counts {
	a.Requests += b.Requests
	a.New += b.New
	a.Dup += b.Dup
	a.Invalid += b.Invalid
	return a
}
