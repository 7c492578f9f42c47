package shardfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/urldedupd/urldedupd/internal/format"
)

// ErrExists is returned by Snapshot when the destination already exists.
var ErrExists = errors.New("destination exists")

// snapshotTag marks the temporary directory a snapshot is built in:
// .NAME.snapshot-RANDOM, beside the destination NAME.
const snapshotTag = ".snapshot-"

// Snapshot copies the open state d into a new state directory dst, which
// must not exist. The copy is built in a temporary directory beside dst
// (shards, then the metadata, each synced) and renamed into place, so dst
// either does not exist or is complete.
//
// Taken while bits are being set, the copy holds every bit that was set
// when Snapshot started, and only bits that were set by the time it ended:
// since bits only go from 0 to 1, that is the state the source had at some
// moment, possibly later for some shards than for others. No URL reported
// new before the snapshot began is missing from it, and it reports nothing
// as seen that was never seen.
//
// The temporary directory is flocked while the snapshot writes it. A
// snapshot that was killed leaves its own behind; the next Snapshot into
// the same parent directory removes every such directory that nobody holds
// a lock on and that holds nothing but state files.
func (d *Dir) Snapshot(dst string) (err error) {
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("shardfile: snapshot %s: %w", dst, ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("shardfile: snapshot: %w", err)
	}
	parent := filepath.Dir(filepath.Clean(dst))
	tmp, tf, err := makeSnapshotDir(parent, "."+filepath.Base(dst)+snapshotTag)
	if err != nil {
		return fmt.Errorf("shardfile: snapshot: %w", noSpace(err))
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
		tf.Close() // drops the lock, after the removal
	}()
	for i, m := range d.maps {
		p := filepath.Join(tmp, format.ShardName(i))
		if err := writeFileSync(p, m); err != nil {
			if isBadAddress(err) { // write(2) from a mapping that lost its pages
				return fmt.Errorf("shardfile: snapshot: %s: %w", filepath.Join(d.path, format.ShardName(i)), ErrFault)
			}
			return fmt.Errorf("shardfile: snapshot %s: %w", p, noSpace(err))
		}
	}
	if d.key != nil {
		if err := format.WriteKeyFile(format.KeyPath(tmp), *d.key); err != nil {
			return fmt.Errorf("shardfile: snapshot: %w", noSpace(err))
		}
	}
	if err := writeMeta(tmp, tf, d.meta); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("shardfile: snapshot: %w", err)
	}
	return syncDir(parent)
}

// makeSnapshotDir removes stale snapshot directories from parent, then
// makes a new one named prefix+random (mode 0777 less the umask) and
// returns it open and exclusively flocked. Both happen under an exclusive
// flock on parent, so a directory that another snapshot has made but not
// yet locked is never taken for a stale one.
func makeSnapshotDir(parent, prefix string) (string, *os.File, error) {
	pf, err := os.Open(parent)
	if err != nil {
		return "", nil, err
	}
	defer pf.Close() // drops the lock on parent
	if err := flock(pf, true, DefaultLockTimeout); err != nil {
		return "", nil, fmt.Errorf("lock %s: %w", parent, err)
	}
	removeStaleSnapshots(parent)
	for try := 0; ; try++ {
		tmp := filepath.Join(parent, fmt.Sprintf("%s%08x", prefix, rand.Uint32()))
		err := os.Mkdir(tmp, 0o777)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		tf, err := os.Open(tmp)
		if err == nil {
			err = flock(tf, true, -1)
		}
		if err != nil {
			if tf != nil {
				tf.Close()
			}
			os.Remove(tmp)
			return "", nil, err
		}
		return tmp, tf, nil
	}
}

// removeStaleSnapshots removes, from parent, the snapshot directories of
// killed snapshots: named .NAME.snapshot-*, not a link, holding only shard
// files and metadata (or its temporary file), and not flocked by anyone.
// The caller holds parent's lock. Errors leave a directory in place.
func removeStaleSnapshots(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, ".") || !strings.Contains(name, snapshotTag) {
			continue
		}
		p := filepath.Join(parent, name)
		f, err := openNoFollow(p, os.O_RDONLY)
		if err != nil {
			continue
		}
		if flock(f, true, -1) == nil && onlyStateFiles(f) {
			os.RemoveAll(p)
		}
		f.Close()
	}
}

func onlyStateFiles(dir *os.File) bool {
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return false
	}
	for _, n := range names {
		if !isShardName(n) && n != MetaName && n != format.KeyName && !strings.HasPrefix(n, "."+MetaName+".tmp-") {
			return false
		}
	}
	return true
}

func isShardName(n string) bool {
	const hex = "0123456789abcdef"
	return len(n) == 2 && strings.IndexByte(hex, n[0]) >= 0 && strings.IndexByte(hex, n[1]) >= 0
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

func syncDir(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}
