package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// bufferCap bounds what a Writer holds in memory: past it, Append writes
// the buffer out (without waiting for the disk), so a burst of any size
// costs at most this much memory.
const bufferCap = 1 << 20

// A Writer is one process's journal: the signatures it answered new, in
// frames, appended in memory and written by Sync. It is safe for
// concurrent use.
type Writer struct {
	j *Journal

	mu      sync.Mutex
	f       *logFile // the current file, flocked
	size    int64    // bytes written to f
	buf     []byte   // frames not yet written; the last may be open
	open    int      // offset in buf of the open frame, -1 when none
	epoch   uint64   // the open frame's epoch
	err     error    // a write that failed since the last checkpoint
	lost    bool     // frames dropped after a failed write: only a checkpoint covers them
	retired []*logFile
}

// NewWriter starts this process's journal file.
func (j *Journal) NewWriter() (*Writer, error) {
	f, err := j.newFile()
	if err != nil {
		return nil, err
	}
	return &Writer{j: j, f: f, size: HeaderSize, buf: make([]byte, 0, bufferCap), open: -1}, nil
}

// Append records the signatures of sigs answered new (seen[i] false),
// decided under epoch (Journal.Epoch read before they were decided). It
// allocates nothing; when the buffer is full it writes it out.
func (w *Writer) Append(epoch uint64, sigs []signature.Signature, seen []bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, s := range sigs {
		if seen[i] {
			continue
		}
		if w.open >= 0 && (w.epoch != epoch || len(w.buf)-w.open == FrameHeaderSize+8*MaxFrameSigs) {
			w.closeFrame()
		}
		need := 8
		if w.open < 0 {
			need += FrameHeaderSize
		}
		if len(w.buf)+need > bufferCap {
			w.writeLocked() // closes the open frame
		}
		if w.open < 0 {
			w.open, w.epoch = len(w.buf), epoch
			w.buf = append(w.buf, make([]byte, FrameHeaderSize)...)
			binary.LittleEndian.PutUint64(w.buf[w.open+8:], epoch)
		}
		w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(s))
	}
}

// closeFrame fills in the open frame's count and checksum.
func (w *Writer) closeFrame() {
	if w.open < 0 {
		return
	}
	f := w.buf[w.open:]
	binary.LittleEndian.PutUint32(f[0:], uint32((len(f)-FrameHeaderSize)/8))
	binary.LittleEndian.PutUint32(f[4:], frameCRC(f[8:]))
	w.open = -1
}

// writeLocked writes the closed frames of the buffer to the file. After a
// failed write the file may end in part of a frame, so nothing more is
// written to it: the frames are dropped, and only a checkpoint, which
// syncs the shards, covers them.
func (w *Writer) writeLocked() {
	w.closeFrame()
	if len(w.buf) == 0 {
		return
	}
	if w.err == nil {
		n, err := w.f.Write(w.buf)
		w.size += int64(n)
		if err != nil {
			w.err = fmt.Errorf("journal: write %s: %w", w.f.path, err)
		}
	}
	if w.err != nil {
		w.lost = true
	}
	w.buf = w.buf[:0]
}

// Sync writes what was appended and waits until it is on disk
// (fdatasync). After an error, every later Sync returns it until a
// Checkpoint succeeds: the decisions since are then in the shards only.
func (w *Writer) Sync() error {
	w.mu.Lock()
	w.writeLocked()
	err, f := w.err, w.f
	w.mu.Unlock()
	if err != nil {
		return err
	}
	if err := fdatasync(f.File); err != nil {
		// After a failed fdatasync the kernel may have dropped the
		// pages it could not write: the file cannot be trusted.
		w.mu.Lock()
		if w.f == f && w.err == nil {
			w.err = fmt.Errorf("journal: sync %s: %w", f.path, err)
			w.lost = true
		}
		w.mu.Unlock()
		return fmt.Errorf("journal: sync %s: %w", f.path, err)
	}
	return nil
}

// Broken reports whether a write or sync failed since the last
// checkpoint: only a checkpoint makes what was decided since durable.
func (w *Writer) Broken() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err != nil
}

// Size is how many bytes the current file holds, or will once the buffer
// is written.
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size + int64(len(w.buf))
}

// Checkpoint makes the journal's decisions the shards' own: it writes and
// syncs the current file, moves on to a new one, calls syncShards (msync
// of every shard), and then removes the old file. Every decision appended
// before it is then on disk in the shards. When syncShards fails, the old
// file is kept (and replayed if this process dies) and the error returned.
func (w *Writer) Checkpoint(syncShards func() error) error {
	nf, err := w.j.newFile()
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.writeLocked()
	old, werr := w.f, w.err
	w.f, w.size, w.err = nf, HeaderSize, nil
	lost := w.lost
	w.lost = false
	w.mu.Unlock()
	if werr == nil {
		werr = fdatasync(old.File)
	}
	if err := syncShards(); err != nil {
		w.mu.Lock()
		w.retired = append(w.retired, old)
		if lost || werr != nil { // only a checkpoint covers those: ask for another
			w.lost, w.err = true, fmt.Errorf("journal: checkpoint: %w", err)
		}
		w.mu.Unlock()
		return fmt.Errorf("journal: checkpoint: %w", err)
	}
	w.mu.Lock()
	retired := append(w.retired, old)
	w.retired = nil
	w.mu.Unlock()
	var errs []error
	for _, f := range retired {
		errs = append(errs, w.j.removeFile(f))
	}
	return errors.Join(errs...)
}

// Close writes and syncs what was appended and closes the file. With
// remove (the caller has synced the shards since its last Append) the
// files are removed; otherwise they stay, for the next writable open to
// replay.
func (w *Writer) Close(remove bool) error {
	err := w.Sync()
	w.mu.Lock()
	defer w.mu.Unlock()
	files := append(w.retired, w.f)
	w.retired, w.f = nil, nil
	var errs []error
	if !remove {
		errs = append(errs, err)
	}
	for _, f := range files {
		if remove {
			errs = append(errs, w.j.removeFile(f))
		} else {
			errs = append(errs, f.Close())
		}
	}
	return errors.Join(errs...)
}
