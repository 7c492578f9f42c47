package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/edsrzf/mmap-go"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// Dir is the journal's subdirectory of a state directory.
const Dir = "journal"

// EpochName is the name of the epoch file in Dir.
const EpochName = "epoch"

const (
	epochSize  = 4096
	epochMagic = "UDJEPOCH"
	offEpoch   = 16 // the forget epoch: bumped by each forget
	offDone    = 24 // the epoch of the last forget whose shards were synced
)

// tempAge is how old a journal file still under its temporary name must
// be before a replay removes it as left by a writer that died starting.
const tempAge = time.Minute

// LockTimeout bounds the wait for the epoch file's lock, held by a forget
// or a replay while it syncs the shards.
var LockTimeout = time.Minute

// A Journal is the journal directory of one state, opened by one process.
type Journal struct {
	dir      string
	id       uint64
	readOnly bool

	mu    sync.Mutex // one forget or replay of this process at a time (flock is per file, not per goroutine)
	epf   *os.File
	epoch mmap.MMap
}

// Open opens the journal of the state directory stateDir, whose id
// (the state's creation time, say) every file must name. It makes
// nothing: the journal directory and its epoch file are made by the first
// writer (NewWriter) or forget. A read-only Journal can only count what is
// Pending.
func Open(stateDir string, id uint64, readOnly bool) (*Journal, error) {
	j := &Journal{dir: filepath.Join(stateDir, Dir), id: id, readOnly: readOnly}
	if readOnly {
		return j, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := os.Lstat(filepath.Join(j.dir, EpochName)); errors.Is(err, fs.ErrNotExist) {
		return j, nil
	}
	return j, j.ensureLocked()
}

// Make makes the journal directory and its epoch file now, as a state
// being created does, so that its first writer adds nothing to the state
// directory but a file in its journal.
func (j *Journal) Make() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.ensureLocked()
}

// ensureLocked makes the journal directory and the epoch file when they
// are missing, and maps the epoch file.
func (j *Journal) ensureLocked() error {
	if j.epf != nil {
		return nil
	}
	if j.readOnly {
		return fmt.Errorf("journal: %s: opened read-only", j.dir)
	}
	if err := os.Mkdir(j.dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("journal: %w", err)
	}
	f, err := j.openEpoch()
	if err != nil {
		return err
	}
	m, err := mmap.Map(f, mmap.RDWR, 0)
	if err != nil {
		f.Close()
		return fmt.Errorf("journal: map %s: %w", f.Name(), err)
	}
	j.epf, j.epoch = f, m
	giveToOwner(filepath.Dir(j.dir), j.dir, f.Name())
	return nil
}

// openEpoch opens the epoch file, making it first when it is missing: a
// page written and synced under a name of its own, then linked in (two
// processes that race both link, and one wins).
func (j *Journal) openEpoch() (*os.File, error) {
	path := filepath.Join(j.dir, EpochName)
	f, err := os.OpenFile(path, os.O_RDWR|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if err := j.makeEpoch(path); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, os.O_RDWR|noFollow, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	b := make([]byte, epochSize+1)
	n, err := f.ReadAt(b, 0)
	if err == nil || n != epochSize || string(b[:8]) != epochMagic {
		f.Close()
		return nil, fmt.Errorf("journal: %s: %w: not an epoch file of %d bytes (%d bytes, starting %q)", path, ErrCorrupt, epochSize, n, b[:min(n, 8)])
	}
	if got := binary.LittleEndian.Uint64(b[8:]); got != j.id {
		f.Close()
		return nil, fmt.Errorf("journal: %s: %w: it names state %016x, this one is %016x", path, ErrOtherState, got, j.id)
	}
	return f, nil
}

func (j *Journal) makeEpoch(path string) error {
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC|noFollow, 0o666)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer os.Remove(tmp)
	b := make([]byte, epochSize)
	copy(b, epochMagic)
	binary.LittleEndian.PutUint64(b[8:], j.id)
	_, err = f.Write(b)
	if err == nil {
		err = fdatasync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
			err = nil
		}
	}
	if err == nil {
		err = syncDir(j.dir)
	}
	if err != nil {
		return fmt.Errorf("journal: make %s: %w", path, err)
	}
	return nil
}

func (j *Journal) word(off int) *uint64 { return (*uint64)(unsafe.Pointer(&j.epoch[off])) }

// Epoch is the forget epoch now: read it before deciding a batch, and
// give it to Writer.Append with the batch's answers. Call it only once
// NewWriter has returned (which maps the epoch file).
func (j *Journal) Epoch() uint64 { return atomic.LoadUint64(j.word(offEpoch)) }

// Forget runs forget, which clears URLs from the shards, in the order that
// keeps replay from bringing them back: under the epoch file's lock,
// forget, bump the epoch, syncShards, then record the epoch as done. A
// frame of an older epoch is then never replayed.
func (j *Journal) Forget(forget func() error, syncShards func() error) error {
	return j.locked(true, func() error {
		if err := forget(); err != nil {
			return err
		}
		e := atomic.AddUint64(j.word(offEpoch), 1)
		if err := syncShards(); err != nil {
			return fmt.Errorf("journal: forget: %w", err)
		}
		atomic.StoreUint64(j.word(offDone), max(e, atomic.LoadUint64(j.word(offDone))))
		if err := j.epoch.Flush(); err != nil {
			return fmt.Errorf("journal: forget: sync %s: %w", j.epf.Name(), err)
		}
		return nil
	})
}

// locked runs fn holding the epoch file's lock. Without create, a
// journal without its directory runs nothing: there is nothing to replay.
func (j *Journal) locked(create bool, fn func() error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !create {
		if _, err := os.Lstat(j.dir); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	if err := j.ensureLocked(); err != nil {
		return err
	}
	if err := flockWait(j.epf, LockTimeout); err != nil {
		return fmt.Errorf("journal: lock %s: %w", j.epf.Name(), err)
	}
	defer unlock(j.epf)
	return fn()
}

// Replayed says what Replay did.
type Replayed struct {
	Writers int // writers that were gone, whose journals were replayed
	Files   int // their files, replayed and removed
	Frames  int // frames replayed
	Sigs    int // signatures decided again
	Skipped int // signatures of frames older than the last forget
}

// Replay replays the journals of writers that are gone: under the epoch
// file's lock, it calls apply with each frame's signatures (from the last
// forget's epoch on), then syncShards, then removes the files. A torn tail
// is given to warn (an error wrapping ErrTorn) and the replay goes on; a
// corrupt journal stops it with an error that names the file, and the
// file stays.
func (j *Journal) Replay(apply func([]signature.Signature) error, syncShards func() error, warn func(error)) (Replayed, error) {
	var r Replayed
	err := j.locked(false, func() error {
		done := atomic.LoadUint64(j.word(offDone))
		writers := map[string]bool{}
		var gone []*os.File
		defer func() {
			for _, f := range gone {
				f.Close()
			}
		}()
		entries, err := os.ReadDir(j.dir)
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		for _, e := range entries {
			name := e.Name()
			if !isLog(name) && !isTemp(name) {
				continue
			}
			path := filepath.Join(j.dir, name)
			if isTemp(name) {
				// A writer creates it, then locks it: between the two a
				// replayer could take the lock of a live writer's file.
				if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < tempAge {
					continue
				}
			}
			f, err := tryLock(path, true)
			if err != nil {
				return err
			}
			if f == nil {
				continue // its writer lives
			}
			gone = append(gone, f)
			if isTemp(name) { // a file a writer never finished: a header at most
				continue
			}
			t, err := Scan(f, j.id, func(epoch uint64, sigs []signature.Signature) error {
				if epoch < done {
					r.Skipped += len(sigs)
					return nil
				}
				return apply(sigs)
			})
			if err != nil {
				return fmt.Errorf("journal: replay %s: %w", path, err)
			}
			if t.Torn > 0 && warn != nil {
				warn(fmt.Errorf("journal: %s: %w: %d bytes after offset %d dropped (never synced, so never promised)", path, ErrTorn, t.Torn, t.End))
			}
			r.Files++
			writers[writerOf(name)] = true
			r.Writers = len(writers)
			r.Frames += t.Frames
			r.Sigs += t.Sigs
		}
		if len(gone) == 0 {
			return nil
		}
		if err := syncShards(); err != nil {
			return fmt.Errorf("journal: replay: %w", err)
		}
		var errs []error
		for _, f := range gone {
			err := os.Remove(f.Name())
			switch {
			case err == nil, errors.Is(err, fs.ErrNotExist):
			case errors.Is(err, fs.ErrPermission) && warn != nil:
				// Replayed again by the next open, which changes nothing.
				warn(fmt.Errorf("journal: replayed %s but cannot remove it: %w", f.Name(), err))
			default:
				errs = append(errs, fmt.Errorf("journal: %w", err))
			}
		}
		return errors.Join(append(errs, syncDir(j.dir))...)
	})
	return r, err
}

// Pending counts the journals of writers that are gone and that hold
// frames: what a writable open would replay. Read-only opens warn with it.
func (j *Journal) Pending() (int, error) {
	entries, err := os.ReadDir(j.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	n := 0
	for _, e := range entries {
		if !isLog(e.Name()) {
			continue
		}
		path := filepath.Join(j.dir, e.Name())
		f, err := tryLock(path, false)
		if err != nil {
			return n, err
		}
		if f == nil {
			continue
		}
		if fi, err := f.Stat(); err == nil && fi.Size() > HeaderSize {
			n++
		}
		f.Close()
	}
	return n, nil
}

// Close unmaps the epoch file and closes it.
func (j *Journal) Close() error {
	if j.epf == nil {
		return nil
	}
	err := j.epoch.Unmap()
	err = errors.Join(err, j.epf.Close())
	j.epf, j.epoch = nil, nil
	return err
}

func isLog(name string) bool { return strings.HasSuffix(name, ".log") && !strings.HasPrefix(name, ".") }
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".log.tmp")
}

// writerOf is the writer a journal file's name names: TIME-PID of
// TIME-PID-N.log.
func writerOf(name string) string {
	name = strings.TrimSuffix(name, ".log")
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return name
}

// logFile is a writer's journal file and the path it has now (the file
// was opened under a temporary name).
type logFile struct {
	*os.File
	path string
}

// newFile makes a writer's journal file: opened and flocked under a
// temporary name, its header written, then renamed and the directory
// synced, so that no replayer ever sees it unlocked, and a crash keeps it.
func (j *Journal) newFile(base string, n int) (*logFile, error) {
	name := fmt.Sprintf("%s-%d.log", base, n)
	tmp := filepath.Join(j.dir, "."+name+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL|noFollow, 0o666)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	err = lockNow(f)
	if err == nil {
		_, err = f.Write(header(j.id))
	}
	path := filepath.Join(j.dir, name)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(j.dir)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("journal: new file %s: %w", path, err)
	}
	return &logFile{File: f, path: path}, nil
}

// removeFile removes a writer's file and closes it (which drops its lock).
// A process that may no longer remove it (it dropped privileges) empties
// it instead: a journal of a header alone replays nothing.
func (j *Journal) removeFile(f *logFile) error {
	err := os.Remove(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = nil
	case errors.Is(err, fs.ErrPermission):
		err = empty(f)
	}
	return errors.Join(err, f.Close())
}
