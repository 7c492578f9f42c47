package state

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/urldedupd/urldedupd/internal/journal"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// DefaultCheckpoint is the checkpoint interval of a journaled state when
// Options.Checkpoint is zero: how often its shards are synced (msync) while
// each flush writes only the journal.
const DefaultCheckpoint = 5 * time.Minute

// CheckpointBytes is the size of journal past which a flush checkpoints
// whatever the interval: it bounds the journal on disk and the replay
// after a crash (8M signatures, a second or two).
const CheckpointBytes = 64 << 20

// journaled decides through a layout over a directory and journals what it
// answered new (package journal), so that a flush writes the journal
// instead of the shards.
type journaled struct {
	local  layout.Local
	j      *journal.Journal
	w      *journal.Writer
	every  time.Duration
	lastCP time.Time // when the last checkpoint succeeded; only the flush goroutine uses it

	mu    sync.Mutex
	stats JournalStats // the checkpoints' figures
}

// JournalStats describes the journal of a state flushed in the
// background: what an operator needs to see that checkpoints happen, and
// how much a crash would leave to replay.
type JournalStats struct {
	Interval time.Duration // Options.Checkpoint
	// Bytes is this process's journal file now: what a replay would read
	// if it died (8 bytes a URL, and a little framing).
	Bytes       int64
	Checkpoints uint64 // checkpoints done, failed ones included
	Failures    uint64 // checkpoints whose shard sync failed
	Last        time.Duration
	// LastOK is when the last successful checkpoint began: every URL
	// decided before it is in the shards on disk. The time of the open
	// until the first.
	LastOK time.Time
}

// JournalStats returns the journal's figures, and false for a state that
// keeps none (a flush interval of zero, Options.Checkpoint negative, a
// windowed layout, Redis).
func (s *State) JournalStats() (JournalStats, bool) {
	jd, ok := s.decider.(*journaled)
	if !ok {
		return JournalStats{}, false
	}
	jd.mu.Lock()
	st := jd.stats
	jd.mu.Unlock()
	st.Bytes = jd.w.Size()
	return st, true
}

// Decide decides as the layout does, then appends the new answers to the
// journal under the forget epoch read before deciding.
func (d *journaled) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	if dryRun {
		return d.local.Decide(ctx, sigs, seen, true)
	}
	e := d.j.Epoch()
	if err := d.local.Decide(ctx, sigs, seen, false); err != nil {
		return err
	}
	d.w.Append(e, sigs, seen)
	return nil
}

// flush is the directory's background flush: the journal written and
// synced, or, every Checkpoint, past CheckpointBytes or after a journal
// write failed, a checkpoint that syncs the shards.
func (d *journaled) flush(syncShards func() error) error {
	now := time.Now()
	if now.Sub(d.lastCP) < d.every && d.w.Size() < CheckpointBytes && !d.w.Broken() {
		return d.w.Sync()
	}
	err := d.w.Checkpoint(syncShards)
	d.mu.Lock()
	d.stats.Checkpoints++
	d.stats.Last = time.Since(now)
	if err != nil {
		d.stats.Failures++
	} else {
		d.stats.LastOK = now
	}
	d.mu.Unlock()
	if err != nil {
		return err
	}
	d.lastCP = now
	return nil
}

// journals reports whether a state of layout l keeps a journal: not the
// windowed layouts, whose answers depend on the time at which they were
// decided (replayed later, they would land in another generation).
func journals(l layout.Layout) bool {
	_, clocked := l.(layout.Clocked)
	return !clocked
}

// journalID is the id a state's journal files carry: a hash of its
// metadata file, the same bytes for every process, which names the state
// (its creation time, layout, sizes and key id).
func journalID(d *shardfile.Dir) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(d.Path(), shardfile.MetaName))
	if err != nil {
		return 0, fmt.Errorf("state: %w", err)
	}
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64(), nil
}

// openJournal opens the journal of a state directory just opened: a
// read-only open warns about journals not yet replayed; a writable one
// replays the journals of processes that are gone, and, with a flush
// interval and a checkpoint interval, journals its own decisions.
func (s *State) openJournal(opts *Options) error {
	d := s.dir
	if !journals(s.layout) {
		return nil
	}
	warn := opts.Local.Warn
	id, err := journalID(d)
	if err != nil {
		return err
	}
	if d.ReadOnly() {
		j, _ := journal.Open(d.Path(), id, true)
		n, err := j.Pending()
		if err == nil && n > 0 && warn != nil {
			warn(fmt.Errorf("state: %s: %w: %d journals of processes that stopped; if the machine lost power since, URLs they answered new may answer new again until a writable open replays them", d.Path(), journal.ErrUnreplayed, n))
		}
		return nil
	}
	j, err := journal.Open(d.Path(), id, false)
	if err == nil && d.Created() {
		err = j.Make() // part of a new state: a writer then only adds its file
	}
	if err != nil {
		return fmt.Errorf("state: %s: %w", d.Path(), err)
	}
	var seen []bool
	r, err := j.Replay(func(sigs []signature.Signature) error {
		if cap(seen) < len(sigs) {
			seen = make([]bool, len(sigs))
		}
		return s.local.Decide(context.Background(), sigs, seen[:len(sigs)], false)
	}, d.Sync, warn)
	s.replayed = r
	if err != nil {
		j.Close()
		return fmt.Errorf("state: %s: %w", d.Path(), err)
	}
	s.journal = j
	if opts.Local.FlushInterval <= 0 || opts.Checkpoint < 0 {
		return nil // forgets still order themselves with other processes' journals
	}
	w, err := j.NewWriter()
	if err != nil {
		j.Close()
		s.journal = nil
		return fmt.Errorf("state: %s: %w", d.Path(), err)
	}
	every := opts.Checkpoint
	if every == 0 {
		every = DefaultCheckpoint
	}
	now := time.Now()
	jd := &journaled{local: s.local, j: j, w: w, every: every, lastCP: now, stats: JournalStats{Interval: every, LastOK: now}}
	s.writer, s.decider = w, jd
	d.SetFlush(jd.flush)
	return nil
}

// Replayed is what opening the state replayed of the journals of
// processes that were gone (package journal); zero for Redis, a read-only
// open and the windowed layouts.
func (s *State) Replayed() journal.Replayed { return s.replayed }

// closeJournal closes the journal after the directory was closed with
// dirErr: a journal whose decisions the close synced to the shards is
// removed; otherwise it is synced and kept, for the next writable open.
func (s *State) closeJournal(dirErr error) error {
	if s.journal == nil {
		return nil
	}
	var err error
	if s.writer != nil {
		err = s.writer.Close(dirErr == nil && !s.noCloseSync)
	}
	if cerr := s.journal.Close(); err == nil {
		err = cerr
	}
	return err
}
