package shardfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mmap "github.com/edsrzf/mmap-go"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// Dir is an open state directory with every shard mapped.
//
// The shard slices returned by Shard stay valid until Close. Sync and Close
// are safe for concurrent use; Close must not race with users of the shard
// memory.
type Dir struct {
	path     string
	meta     format.Meta
	readOnly bool
	created  bool
	madeDirs []string // directories Open created, outermost first
	lock     *os.File // the directory itself, flocked
	noSync   bool     // Close does not wait for the shards to be on disk
	maps     [format.Shards]mmap.MMap
	key      *signature.Key // a Keyed state's, from its key file
	memory   bool           // made by Memory: no files, no lock

	mu      sync.Mutex
	closed  bool
	stop    chan struct{}
	flushed chan struct{}

	statsMu sync.Mutex // guards flush alone, so that reading it never waits for a flush
	flush   FlushStats // the background flushes so far

	flusher atomic.Pointer[func(syncShards func() error) error] // SetFlush's
}

// Open opens the state in dir, creating it first if opts.Create is set and
// dir holds none. It validates the metadata and every shard before mapping
// anything, and undoes everything it did if any step fails.
func Open(dir string, opts *Options) (*Dir, error) {
	if opts == nil {
		opts = DefaultOptions
	}
	d := &Dir{path: dir, readOnly: opts.ReadOnly, noSync: opts.NoCloseSync}
	if err := d.open(opts); err != nil {
		_ = d.release()
		for i := len(d.madeDirs) - 1; i >= 0; i-- {
			_ = os.Remove(d.madeDirs[i]) // only if still empty: ours alone
		}
		return nil, err
	}
	if opts.FlushInterval > 0 && !d.readOnly {
		d.flush.Interval = opts.FlushInterval
		d.stop, d.flushed = make(chan struct{}), make(chan struct{})
		go d.flushLoop(opts.FlushInterval)
	}
	return d, nil
}

func (d *Dir) open(opts *Options) error {
	fi, err := os.Stat(d.path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && opts.Create && !opts.ReadOnly:
		if d.madeDirs, err = mkdirs(d.path); err != nil {
			return fmt.Errorf("shardfile: create %s: %w", d.path, noSpace(err))
		}
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("shardfile: %s: %w", d.path, format.ErrNoState)
	case err != nil:
		return fmt.Errorf("shardfile: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("shardfile: %s: %w", d.path, ErrNotDir)
	}
	if d.lock, err = os.Open(d.path); err != nil {
		return fmt.Errorf("shardfile: %w", err)
	}
	timeout := opts.LockTimeout
	if timeout == 0 {
		timeout = DefaultLockTimeout
	}
	if err := flock(d.lock, false, timeout); err != nil {
		return fmt.Errorf("shardfile: lock %s: %w", d.path, err)
	}
	_, err = os.Lstat(filepath.Join(d.path, MetaName))
	if errors.Is(err, fs.ErrNotExist) {
		if !opts.Create || opts.ReadOnly {
			if _, err := os.Lstat(filepath.Join(d.path, CreatingName)); err == nil {
				return fmt.Errorf("shardfile: %s: %w: its creation was interrupted (init, or any command that creates the state, starts it again)", d.path, format.ErrNoState)
			}
			if err := d.checkNoShards(); err != nil {
				return err
			}
			return fmt.Errorf("shardfile: %s: %w", d.path, format.ErrNoState)
		}
		if err := d.createLocked(opts, timeout); err != nil {
			return err
		}
	}
	if d.meta, err = readMeta(d.path); err != nil {
		return err
	}
	if opts.Spec != nil {
		if err := d.meta.Require(d.path, *opts.Spec); err != nil {
			return fmt.Errorf("shardfile: %w", err)
		}
	}
	if err := d.readKey(); err != nil {
		return err
	}
	return d.mapShards(opts.Warn, opts.Populate && !d.readOnly)
}

// readKey reads a Keyed state's key file and checks it against the
// metadata's key id.
func (d *Dir) readKey() error {
	if !d.meta.Spec.Layout.Keyed() {
		return nil
	}
	p := format.KeyPath(d.path)
	k, err := format.ReadKeyFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("shardfile: %s: %w: the state is keyed and its key file is missing (restore it from a backup or from the other sensors' key file)", p, format.ErrKey)
	}
	if err != nil {
		return fmt.Errorf("shardfile: %w", err)
	}
	if err := d.meta.CheckKey("key file "+p, k); err != nil {
		return fmt.Errorf("shardfile: %w", err)
	}
	d.key = &k
	return nil
}

// newMeta returns the metadata Create makes from opts.
func newMeta(opts *Options) (format.Meta, error) {
	m, err := format.Creating(opts.Spec, opts.New, time.Now())
	if err != nil {
		return m, fmt.Errorf("shardfile: %w", err)
	}
	return m, nil
}

// createLocked takes the exclusive lock, and creates the state unless
// another process did so while we waited. It returns holding the shared
// lock again.
//
// While it waits for the exclusive lock it holds no lock at all, and it
// stops waiting as soon as the metadata appears: another process holding a
// shared lock after creating the state must not keep it waiting.
func (d *Dir) createLocked(opts *Options, timeout time.Duration) error {
	metaPath := filepath.Join(d.path, MetaName)
	deadline := time.Now().Add(timeout)
	for {
		if err := flock(d.lock, true, -1); err == nil {
			break
		} else if !errors.Is(err, ErrLocked) {
			return fmt.Errorf("shardfile: lock %s for creation: %w", d.path, err)
		}
		if _, err := os.Lstat(metaPath); err == nil {
			return d.relock(timeout)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("shardfile: lock %s for creation: %w", d.path, ErrLocked)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Lstat(metaPath); err == nil {
		return d.relock(timeout)
	}
	// A creation that was killed chose this directory already: finish it
	// whatever else is there now.
	_, err := os.Lstat(filepath.Join(d.path, CreatingName))
	resumed := err == nil
	if err := d.removeUnfinished(); err != nil {
		return err
	}
	if err := d.checkNoShards(); err != nil {
		return err
	}
	m, err := newMeta(opts)
	if err != nil {
		return err
	}
	if !resumed {
		if err := d.checkEmpty(); err != nil {
			return err
		}
	}
	keyPath := format.KeyPath(d.path)
	if _, err := os.Lstat(keyPath); err == nil && m.Key != nil {
		return fmt.Errorf("shardfile: %s: %w: %s exists but %s does not (a key placed by hand; move it aside)", d.path, ErrIncomplete, format.KeyName, MetaName)
	}
	key := m.Key
	m.Key = nil // the key file holds it; the metadata only its id
	// From here every file made is ours: the marker says so to whoever
	// finds it without the metadata (this creation was killed).
	if err := writeCreating(d.path, d.lock, m); err != nil {
		return err
	}
	madeKey := false
	undo := func() {
		removeShards(d.path, format.Shards)
		if madeKey {
			_ = os.Remove(keyPath)
		}
		_ = os.Remove(filepath.Join(d.path, CreatingName))
	}
	if key != nil {
		if err := format.WriteKeyFile(keyPath, *key); err != nil {
			_ = os.Remove(filepath.Join(d.path, CreatingName))
			if errors.Is(err, fs.ErrExist) {
				err = fmt.Errorf("%w: %s exists but %s does not (a key placed by hand; move it aside)", ErrIncomplete, format.KeyName, MetaName)
			}
			return fmt.Errorf("shardfile: %s: %w", d.path, noSpace(err))
		}
		madeKey = true
	}
	if err := createShards(d.path, m.Sizes.ShardBytes); err != nil {
		undo()
		return err
	}
	// The state is complete the moment the metadata has its name.
	if err := os.Rename(filepath.Join(d.path, CreatingName), metaPath); err != nil {
		undo()
		return fmt.Errorf("shardfile: write %s: %w", metaPath, noSpace(err))
	}
	if err := d.lock.Sync(); err != nil {
		return fmt.Errorf("shardfile: sync %s: %w", d.path, err)
	}
	d.created = true
	return d.relock(timeout)
}

// CreatingName is the metadata of a state being created, under the name it
// has until the state is complete. Creation writes it (synced) before any
// other file, and renames it to MetaName once the shards and the key file
// are on disk, so a directory holds one or the other, never both. Found
// without MetaName, it marks a creation that was killed: every shard and
// key file there was made by that creation, and the next creator (holding
// the exclusive lock, so that creator is gone) removes them and starts
// again.
const CreatingName = "." + MetaName + ".creating"

// writeCreating writes the creation marker: m, synced, and the directory
// entry synced, before anything else is made.
func writeCreating(dir string, dirf *os.File, m format.Meta) error {
	p := filepath.Join(dir, CreatingName)
	data, _ := m.MarshalText()
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666) // less the umask
	if err != nil {
		return fmt.Errorf("shardfile: create %s: %w", p, noSpace(err))
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = dirf.Sync()
	}
	if err != nil {
		_ = os.Remove(p)
		return fmt.Errorf("shardfile: create %s: %w", p, noSpace(err))
	}
	return nil
}

// removeUnfinished removes what a killed creation left: when the creation
// marker is there (and the metadata is not: the caller checked, holding
// the exclusive lock), the shards and the key file, which that creation
// made, then the marker. A shard or key file that is not a regular file
// was not made by it and is left, refused as ErrIncomplete.
func (d *Dir) removeUnfinished() error {
	marker := filepath.Join(d.path, CreatingName)
	fi, err := os.Lstat(marker)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("shardfile: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("shardfile: %s: %w: mode %v", marker, ErrNotRegular, fi.Mode())
	}
	paths := []string{format.KeyPath(d.path)}
	for i := 0; i < format.Shards; i++ {
		paths = append(paths, filepath.Join(d.path, format.ShardName(i)))
	}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil && !fi.Mode().IsRegular() {
			err = fmt.Errorf("%w: %s is not a regular file, so not made by the creation that was killed (move it aside)", ErrIncomplete, p)
		}
		if err == nil {
			err = os.Remove(p)
		}
		if err != nil {
			return fmt.Errorf("shardfile: %s: unfinished creation: %w", d.path, err)
		}
	}
	if err := os.Remove(marker); err != nil {
		return fmt.Errorf("shardfile: %s: unfinished creation: %w", d.path, err)
	}
	return d.lock.Sync()
}

// mkdirs creates path and its missing parents, mode 0777 less the umask,
// and returns the ones it created, outermost first (not those another
// process made meanwhile), so that a failed creation can remove them.
func mkdirs(path string) ([]string, error) {
	var missing []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o777)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return made, err
		}
		made = append(made, missing[i])
	}
	return made, nil
}

// relock goes back to the shared lock.
func (d *Dir) relock(timeout time.Duration) error {
	if err := flock(d.lock, false, timeout); err != nil {
		return fmt.Errorf("shardfile: lock %s: %w", d.path, err)
	}
	return nil
}

func (d *Dir) checkNoShards() error {
	for i := 0; i < format.Shards; i++ {
		p := filepath.Join(d.path, format.ShardName(i))
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("shardfile: %s: %w: %s exists but %s does not (not a urldedupd state, or an init interrupted by a urldedupd that did not mark its creations; move it aside)",
				d.path, ErrIncomplete, format.ShardName(i), MetaName)
		}
	}
	return nil
}

// checkEmpty returns ErrNotEmpty unless the directory, which holds no
// state, is empty but for what may be there before a state is: a file
// system's lost+found, a socket (an API socket left by a daemon that was
// killed), a key file (whose own check says more). A mistyped --dir ~ must
// not fill a home directory with 256 shard files.
func (d *Dir) checkEmpty() error {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return fmt.Errorf("shardfile: %w", err)
	}
	var other []string
	for _, e := range entries {
		switch {
		case e.Name() == "lost+found" && e.IsDir(), e.Type()&fs.ModeSocket != 0, e.Name() == format.KeyName:
			continue
		}
		other = append(other, e.Name())
	}
	if len(other) == 0 {
		return nil
	}
	list := strings.Join(other[:min(len(other), 3)], ", ")
	if len(other) > 3 {
		list += fmt.Sprintf(" and %d more", len(other)-3)
	}
	return fmt.Errorf("shardfile: %s: %w: it holds %s (a state is made only in an absent or empty directory; choose another)", d.path, ErrNotEmpty, list)
}

// createShards creates the 256 shard files and writes their zeros to disk.
// Real zeros, not a sparse or fallocated file: the blocks are then
// allocated, so setting a bit through the mapping can never find the disk
// full (a SIGBUS), and a first write to a page costs a plain page fault
// instead of an extent conversion in the file system's journal (about 10 µs
// a page on ext4). On failure it removes what it made.
//
// The zeros go in one page a write where the file system writes pages
// back. One with large folios (ext4 from Linux 6.16, XFS) caches a write
// of 4 MiB as 2 MiB folios, and the kernel tracks a mapped folio's
// dirtiness as one: a bit set in such a shard then made the next flush
// write the whole 2 MiB, so a state fresh from init wrote 512 MiB at
// every --flush-interval under as little as a thousand URLs a second
// (docs/BENCHMARKS.md, "Flushes write pages, not shards"). Written a page
// at a time, the cache holds 4 KiB folios, as it does once the state has
// been read back from disk through the mapping (after a reboot), and a
// flush writes 4 KiB for each page set since the last. It costs about
// 0.4 s of system time for 512 MiB. tmpfs writes nothing back: there the
// shards are allocated (fallocate reserves their memory, so a full tmpfs
// is found now, not at a page fault) and not written, which copies no
// zeros (a third less processor than writing them 4 MiB at a time).
func createShards(dir string, size int64) error {
	var big []byte
	for i := 0; i < format.Shards; i++ {
		p := filepath.Join(dir, format.ShardName(i))
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666) // less the umask
		if err == nil {
			err = fillShard(f, size, &big)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				i++ // remove this one too
			}
		}
		if err != nil {
			removeShards(dir, i)
			return fmt.Errorf("shardfile: create %s: %w", p, noSpace(err))
		}
	}
	// Sync after writing them all, so the kernel can write them back
	// together.
	for i := 0; i < format.Shards; i++ {
		p := filepath.Join(dir, format.ShardName(i))
		if err := syncFile(p); err != nil {
			removeShards(dir, format.Shards)
			return fmt.Errorf("shardfile: create %s: %w", p, noSpace(err))
		}
	}
	return nil
}

// fillShard gives the new, empty shard f its size: allocated on tmpfs,
// zeros written elsewhere (createShards says why), in writes of *big,
// which it makes once.
func fillShard(f *os.File, size int64, big *[]byte) error {
	back := writesBack(f)
	if !back {
		if err := allocate(f, size); !isUnsupported(err) {
			return err
		}
	}
	if *big == nil {
		*big = make([]byte, min(size, 4<<20))
	}
	zeros := *big
	if back {
		zeros = zeros[:min(size, int64(os.Getpagesize()))]
	}
	var err error
	for n := int64(0); n < size && err == nil; n += int64(len(zeros)) {
		_, err = f.Write(zeros[:min(int64(len(zeros)), size-n)]) // a shard need not be a multiple of either (bitmap-window)
	}
	return err
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

func removeShards(dir string, n int) {
	for i := 0; i < n; i++ {
		_ = os.Remove(filepath.Join(dir, format.ShardName(i)))
	}
}

// checkShards validates every shard's presence, type and size before
// anything is mapped. A symbolic link is refused, not followed.
func (d *Dir) checkShards() error {
	for i := 0; i < format.Shards; i++ {
		p := filepath.Join(d.path, format.ShardName(i))
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("shardfile: %s: %w", p, ErrShardMissing)
		}
		if err != nil {
			return fmt.Errorf("shardfile: %w", err)
		}
		if err := checkShardInfo(p, fi, d.meta.Sizes.ShardBytes); err != nil {
			return err
		}
	}
	return nil
}

func checkShardInfo(path string, fi os.FileInfo, size int64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("shardfile: %s: %w: mode %v (a shard must be a regular file inside the state directory; links are not followed)",
			path, ErrNotRegular, fi.Mode())
	}
	if fi.Size() != size {
		return fmt.Errorf("shardfile: %s: %w: %d bytes, mode %v (want a regular file of %d bytes)",
			path, format.ErrShardSize, fi.Size(), fi.Mode(), size)
	}
	return nil
}

func (d *Dir) mapShards(warn func(error), populateMaps bool) error {
	if err := d.checkShards(); err != nil {
		return err
	}
	flag, prot := os.O_RDWR, mmap.RDWR
	if d.readOnly {
		flag, prot = os.O_RDONLY, mmap.RDONLY
	}
	var left unallocated
	for i := range d.maps {
		p := filepath.Join(d.path, format.ShardName(i))
		f, err := openNoFollow(p, flag)
		if err != nil {
			return fmt.Errorf("shardfile: %w", err)
		}
		m, err := mapShard(f, p, d.meta.Sizes.ShardBytes, prot, d.readOnly, &left)
		_ = f.Close() // the mapping outlives the descriptor
		if err != nil {
			return err
		}
		d.maps[i] = m
		if populateMaps {
			populate(m)
		}
	}
	if left.shards > 0 && warn != nil {
		warn(left.warning(d.path))
	}
	return nil
}

func mapShard(f *os.File, path string, size int64, prot int, readOnly bool, left *unallocated) (mmap.MMap, error) {
	fi, err := f.Stat() // the opened file, not the path: it may have changed since checkShards
	if err != nil {
		return nil, fmt.Errorf("shardfile: %w", err)
	}
	if err := checkShardInfo(path, fi, size); err != nil {
		return nil, err
	}
	// Read-only users never write, so a hole cannot fault for them.
	if !readOnly {
		if err := fillSparse(f, path, fi, size, left); err != nil {
			return nil, err
		}
	}
	m, err := mmap.MapRegion(f, int(size), prot, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("shardfile: map %s: %w", path, err)
	}
	// No MADV_RANDOM (bbolt's advice for sparse B-tree pages): this bitmap
	// is dense, and with readahead off a cold state costs one 4 KiB disk
	// read per first touch (3.6 s instead of 0.8 s for 75,012 URLs).
	return m, nil
}
