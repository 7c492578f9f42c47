package daemon

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// EventLog is the serialised, reopenable writer of the event log: each
// source writes whole records to it, and Reopen (on SIGHUP) closes the file
// and opens the path again, so logrotate can move it away.
type EventLog struct {
	mu   sync.Mutex
	path string // "" or "-": standard output
	f    *os.File
	w    *bufio.Writer
	// created is true when OpenEventLog created the file.
	created bool
}

// OpenEventLog opens path for appending ("-" or "": standard output).
func OpenEventLog(path string) (*EventLog, error) {
	l := &EventLog{path: path}
	if l.path != "" && l.path != "-" {
		_, err := os.Lstat(path)
		l.created = errors.Is(err, os.ErrNotExist)
	}
	if err := l.open(); err != nil {
		return nil, fmt.Errorf("daemon: event log: %w", err)
	}
	return l, nil
}

func (l *EventLog) open() error {
	if l.path == "" || l.path == "-" {
		l.f = os.Stdout
	} else {
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
		if err != nil {
			return err
		}
		l.f = f
	}
	l.w = bufio.NewWriterSize(l.f, 64<<10)
	return nil
}

// Write writes one or more whole records.
func (l *EventLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Flush writes buffered records to the file.
func (l *EventLog) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Flush()
}

// Reopen flushes and closes the file and opens the path again. Records
// written meanwhile wait on the lock: none is lost.
func (l *EventLog) Reopen() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == os.Stdout {
		return l.w.Flush()
	}
	err := errors.Join(l.w.Flush(), l.f.Close())
	return errors.Join(err, l.open())
}

// Close flushes and closes.
func (l *EventLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.w.Flush()
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
