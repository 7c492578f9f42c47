package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// bufferCap bounds what a Writer holds in memory: past it, Append writes
// the buffer out (without waiting for the disk), so a burst of any size
// costs at most this much memory.
const bufferCap = 1 << 20

// A Writer is one process's journal: the signatures it answered new, in
// frames, appended in memory and written by Sync. It keeps two files, made
// by NewWriter, and writes to one at a time: a checkpoint moves to the
// other and empties the first once the shards are synced, so that a
// process that drops privileges after NewWriter (serve --user) never needs
// to make or remove a file. It is safe for concurrent use.
type Writer struct {
	j *Journal

	mu    sync.Mutex
	files [2]*logFile // flocked, opened for appending
	clean [2]bool     // the file holds its header alone
	cur   int         // the file written to
	size  int64       // bytes written to the current file
	buf   []byte      // frames not yet written; the last may be open
	open  int         // offset in buf of the open frame, -1 when none
	epoch uint64      // the open frame's epoch
	// err is a write or sync that failed to the current file: the frames
	// appended since are dropped, and only a checkpoint covers them.
	err error
}

// NewWriter starts this process's journal files.
func (j *Journal) NewWriter() (*Writer, error) {
	j.mu.Lock()
	err := j.ensureLocked()
	j.mu.Unlock()
	if err != nil {
		return nil, err
	}
	w := &Writer{j: j, size: HeaderSize, buf: make([]byte, 0, bufferCap), open: -1, clean: [2]bool{true, true}}
	base := fmt.Sprintf("%d-%d", time.Now().UnixNano(), os.Getpid())
	for i := range w.files {
		if w.files[i], err = j.newFile(base, i); err != nil {
			if i == 1 {
				j.removeFile(w.files[0])
			}
			return nil, err
		}
	}
	return w, nil
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
		f := w.files[w.cur]
		w.clean[w.cur] = false
		n, err := f.Write(w.buf)
		w.size += int64(n)
		if err != nil {
			w.err = fmt.Errorf("journal: write %s: %w", f.path, err)
		}
	}
	w.buf = w.buf[:0]
}

// Sync writes what was appended and waits until it is on disk
// (fdatasync). After an error, every later Sync returns it until a
// Checkpoint succeeds: the decisions since are then in the shards only.
func (w *Writer) Sync() error {
	w.mu.Lock()
	w.writeLocked()
	err, f := w.err, w.files[w.cur]
	w.mu.Unlock()
	if err != nil {
		return err
	}
	if err := fdatasync(f.File); err != nil {
		// After a failed fdatasync the kernel may have dropped the
		// pages it could not write: the file cannot be trusted.
		w.mu.Lock()
		if w.files[w.cur] == f && w.err == nil {
			w.err = fmt.Errorf("journal: sync %s: %w", f.path, err)
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
// syncs the current file, moves on to the other (when that one is empty),
// calls syncShards (msync of every shard), and then empties the file it
// left. Every decision appended before it is then on disk in the shards.
// When syncShards fails, the file is kept as it is (and replayed if this
// process dies), and the error returned.
func (w *Writer) Checkpoint(syncShards func() error) error {
	w.mu.Lock()
	w.writeLocked()
	old, werr := w.cur, w.err
	switched := w.clean[1-w.cur]
	if switched {
		w.cur, w.size, w.err = 1-w.cur, HeaderSize, nil
	}
	w.mu.Unlock()
	if werr == nil {
		werr = fdatasync(w.files[old].File)
	}
	if err := syncShards(); err != nil {
		if switched && werr != nil { // frames were dropped: only a checkpoint covers them
			w.mu.Lock()
			w.err = fmt.Errorf("journal: checkpoint: %w", err)
			w.mu.Unlock()
		}
		return fmt.Errorf("journal: checkpoint: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	for i, f := range w.files {
		if i != w.cur && !w.clean[i] {
			if err := empty(f); err != nil {
				errs = append(errs, err)
				continue
			}
			w.clean[i] = true
		}
	}
	return errors.Join(errs...)
}

// empty truncates a journal file to its header and syncs it, before
// anything is appended to it again.
func empty(f *logFile) error {
	if err := f.Truncate(HeaderSize); err != nil {
		return fmt.Errorf("journal: empty %s: %w", f.path, err)
	}
	if err := fdatasync(f.File); err != nil {
		return fmt.Errorf("journal: empty %s: %w", f.path, err)
	}
	return nil
}

// Close writes and syncs what was appended and closes the files. With
// remove (the caller has synced the shards since its last Append) the
// files are removed, or emptied when the process may no longer remove
// them (it dropped privileges); otherwise they stay, for the next
// writable open to replay.
func (w *Writer) Close(remove bool) error {
	err := w.Sync()
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	if !remove {
		errs = append(errs, err)
	}
	for i, f := range w.files {
		if f == nil {
			continue
		}
		if remove {
			errs = append(errs, w.j.removeFile(f))
		} else {
			errs = append(errs, f.Close())
		}
		w.files[i] = nil
	}
	return errors.Join(errs...)
}
