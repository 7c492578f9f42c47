package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/urldedupd/urldedupd/internal/counter"
)

// eventBuffer is how many bytes of records the event log holds before it
// writes them to the file.
const eventBuffer = 64 << 10

// EventLog is the serialised, reopenable writer of the event log: each
// source writes whole records to it, and Reopen (on SIGHUP) switches to a
// new file at the path, so logrotate can move the old one away.
//
// A write to the event log never fails for the writer, so that capture
// goes on whatever the file does: records that cannot be written (disk
// full, I/O error) are dropped and counted in Stats, and writing resumes
// when the file takes data again. It is safe for concurrent use.
type EventLog struct {
	mu      sync.Mutex
	path    string // "" or "-": standard output
	f       *os.File
	buf     []byte // whole records not yet written
	torn    bool   // a failed write left a partial record at the end of the file
	created bool   // OpenEventLog created the file
	stats   EventLogStats
}

// EventLogStats are an event log's failures.
type EventLogStats struct {
	// Lost counts records that could not be written.
	Lost uint64
	// WriteErrors counts failed writes to the file (each loses the records
	// buffered at the time); LastError is the latest.
	WriteErrors uint64
	LastError   error
	// Failing is true from a failed write until a write succeeds.
	Failing bool
	// ReopenFailures counts reopens that could not open the path.
	ReopenFailures uint64
	// Stale is true while the last reopen failed: records still go to the
	// file the path named before (which logrotate may have renamed).
	Stale bool
}

// EventLogStatsCounters describes EventLogStats' counters
// (internal/counter): urldedupd_event_log_NAME_total.
var EventLogStatsCounters = counter.Table[EventLogStats]{
	{Name: "lost_records", Help: "Event records that could not be written (capture went on)", Field: func(s *EventLogStats) *uint64 { return &s.Lost }},
	{Name: "write_errors", Help: "Failed writes to the event log", Field: func(s *EventLogStats) *uint64 { return &s.WriteErrors }},
	{Name: "reopen_failures", Help: "SIGHUPs whose reopen of the event log failed", Field: func(s *EventLogStats) *uint64 { return &s.ReopenFailures }},
}

// OpenEventLog opens path for appending, creating it if needed ("-" or "":
// standard output).
func OpenEventLog(path string) (*EventLog, error) {
	l := &EventLog{path: path, buf: make([]byte, 0, eventBuffer)}
	if l.stdout() {
		l.f = os.Stdout
		return l, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o640)
		l.created = err == nil
	}
	if err != nil {
		return nil, fmt.Errorf("daemon: event log: %w", err)
	}
	l.f = f
	return l, nil
}

func (l *EventLog) stdout() bool { return l.path == "" || l.path == "-" }

// Write takes one or more whole records. It never fails: see EventLog.
func (l *EventLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf)+len(p) > cap(l.buf) {
		l.flush()
	}
	if len(p) > cap(l.buf) {
		l.write(p)
	} else {
		l.buf = append(l.buf, p...)
	}
	return len(p), nil
}

// Flush writes buffered records to the file. It returns the error of the
// write, if it failed: those records are lost and counted.
func (l *EventLog) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flush()
}

func (l *EventLog) flush() error {
	err := l.write(l.buf)
	l.buf = l.buf[:0]
	return err
}

// write writes records to the file, or counts them lost.
func (l *EventLog) write(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if l.torn {
		// End the partial record, so that later records are lines of
		// their own.
		if _, err := l.f.Write(newline); err != nil {
			return l.failed(p, err)
		}
		l.torn = false
	}
	n, err := l.f.Write(p)
	if err != nil {
		l.torn = n > 0 && p[n-1] != '\n'
		return l.failed(p[n:], err)
	}
	l.stats.Failing = false
	return nil
}

var newline = []byte{'\n'}

// failed counts the records of p (the part of a write that did not reach
// the file) as lost.
func (l *EventLog) failed(p []byte, err error) error {
	err = fmt.Errorf("daemon: event log %s: %w", l.name(), err)
	l.stats.Lost += uint64(bytes.Count(p, []byte{'\n'}))
	l.stats.WriteErrors++
	l.stats.LastError = err
	l.stats.Failing = true
	return err
}

func (l *EventLog) name() string {
	if l.stdout() {
		return "(standard output)"
	}
	return l.path
}

// Reopen opens the path again and switches to the new file: the records
// buffered so far go to the old one, then it is closed. If the path cannot
// be opened, the log keeps writing to the old file, is marked Stale, and
// Reopen returns the error; the next Reopen tries again. Reopen returns no
// other error: records the old file does not take are counted in Stats.
func (l *EventLog) Reopen() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stdout() {
		return l.flush()
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		l.stats.ReopenFailures++
		l.stats.Stale = true
		return fmt.Errorf("daemon: event log: reopen: %w (still writing to the file it had before)", err)
	}
	// What the old file does not take is counted in Stats, like any
	// failed write: the switch itself has succeeded.
	_ = l.flush()
	_ = l.f.Close()
	l.f, l.torn, l.stats.Stale = f, false, false
	return nil
}

// Stats returns the log's failures so far.
func (l *EventLog) Stats() EventLogStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Close flushes and closes.
func (l *EventLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.flush()
	if l.f != os.Stdout {
		err = errors.Join(err, l.f.Close())
	}
	return err
}

// Discard closes a log nothing was written to and removes its file if
// OpenEventLog created it: for a start-up that failed.
func (l *EventLog) Discard() error {
	err := l.Close()
	if l.created {
		err = errors.Join(err, os.Remove(l.path))
	}
	return err
}

var _ io.Writer = (*EventLog)(nil)

// eventLogReportEvery is the least time between two log lines about
// records the event log could not write.
const eventLogReportEvery = 10 * time.Second

// eventLogReport says, at most every eventLogReportEvery, how many records
// the event log could not write, and when it writes again.
type eventLogReport struct {
	errors  uint64 // write errors reported so far
	lost    uint64
	last    time.Time
	failing bool
}

func (r *eventLogReport) check(l *EventLog, log *slog.Logger, now time.Time) {
	st := l.Stats()
	if st.WriteErrors > r.errors && (now.Sub(r.last) >= eventLogReportEvery || !st.Failing) {
		log.Error("event log: records could not be written; capture goes on",
			"lost", st.Lost-r.lost, "lost_total", st.Lost, "err", st.LastError)
		r.errors, r.lost, r.last, r.failing = st.WriteErrors, st.Lost, now, true
	}
	if r.failing && !st.Failing && st.WriteErrors == r.errors {
		log.Info("event log: writing again", "lost_total", st.Lost)
		r.failing = false
	}
}
