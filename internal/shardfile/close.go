package shardfile

import (
	"errors"
	"fmt"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// Path returns the state directory.
func (d *Dir) Path() string { return d.path }

// Meta returns the state's metadata.
func (d *Dir) Meta() format.Meta { return d.meta }

// ReadOnly reports whether the shards are mapped read-only.
func (d *Dir) ReadOnly() bool { return d.readOnly }

// Created reports whether Open created the state.
func (d *Dir) Created() bool { return d.created }

// Key returns a Keyed state's secret key, read from its key file and
// checked against the metadata's key id; nil for other layouts.
func (d *Dir) Key() *signature.Key { return d.key }

// Shard returns the mapped bytes of shard i (0 ≤ i < 256), Meta().Sizes.ShardBytes long.
// The slice aliases the shared mapping: it is valid until Close, and a
// read-only Dir's slice must not be written.
func (d *Dir) Shard(i int) []byte { return d.maps[i] }

// Sync writes every dirty shard page to disk and waits for it (msync
// MS_SYNC). It is a no-op on a read-only Dir.
func (d *Dir) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return d.syncLocked()
}

func (d *Dir) syncLocked() error {
	if d.readOnly || d.memory {
		return nil
	}
	var errs []error
	for i, m := range d.maps {
		if err := syncMap(m); err != nil {
			errs = append(errs, fmt.Errorf("shardfile: sync %s/%s: %w", d.path, format.ShardName(i), err))
		}
	}
	return errors.Join(errs...)
}

// Close stops the background flush, syncs, unmaps every shard and releases
// the lock, returning every error it met. Closing twice returns nil.
func (d *Dir) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	if d.stop != nil {
		close(d.stop)
		<-d.flushed
	}
	var err error
	if !d.noSync {
		err = d.syncLocked()
	}
	return errors.Join(err, d.release())
}

// release unmaps and unlocks whatever was set up.
func (d *Dir) release() error {
	var errs []error
	for i, m := range d.maps {
		if m != nil {
			if err := m.Unmap(); err != nil {
				errs = append(errs, fmt.Errorf("shardfile: unmap %s: %w", format.ShardName(i), err))
			}
			d.maps[i] = nil
		}
	}
	if d.lock != nil {
		errs = append(errs, d.lock.Close()) // closing drops the flock
		d.lock = nil
	}
	return errors.Join(errs...)
}

func (d *Dir) flushLoop(every time.Duration) {
	defer close(d.flushed)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.mu.Lock()
			if !d.closed {
				start := time.Now()
				var err error
				if fn := d.flusher.Load(); fn != nil {
					err = (*fn)(d.syncLocked)
				} else {
					err = d.syncLocked()
				}
				d.statsMu.Lock()
				f := &d.flush
				f.Flushes++
				f.Last, f.Err = time.Since(start), err
				if err != nil {
					f.Failures++
					f.LastFailure = err
				} else {
					f.LastOK = start
				}
				d.statsMu.Unlock()
			}
			d.mu.Unlock()
		}
	}
}

// SetFlush makes each background flush (Options.FlushInterval) call fn
// instead of syncing every shard, and count its error as the flush's. fn
// is given the sync of every shard, to call when it chooses (a journal's
// checkpoint, package journal). It runs holding the Dir's lock: it must not
// call Sync or Close.
func (d *Dir) SetFlush(fn func(syncShards func() error) error) { d.flusher.Store(&fn) }

// FlushStats describes the background flushes of a Dir opened with a
// FlushInterval: what an operator needs to know that what was decided
// reaches the disk, and in time.
type FlushStats struct {
	Interval time.Duration // Options.FlushInterval; 0: no background flush
	Flushes  uint64        // flushes done, failed ones included
	Failures uint64        // flushes that returned an error
	Last     time.Duration // how long the last flush took
	// LastOK is when the last successful flush began: every bit set
	// before it is on disk. Zero until one has succeeded.
	LastOK time.Time
	Err    error // the last flush's error; nil when it succeeded
	// LastFailure is the error of the last flush that failed, kept when
	// later ones succeed; nil when none has failed.
	LastFailure error
}

// FlushStats returns the background flushes' figures so far, as of the
// last flush that ended: it does not wait for one in progress (a flush
// can take seconds, or hang on a failing disk).
func (d *Dir) FlushStats() FlushStats {
	d.statsMu.Lock()
	defer d.statsMu.Unlock()
	return d.flush
}
