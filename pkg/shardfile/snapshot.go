package shardfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrExists is returned by Snapshot when the destination already exists.
var ErrExists = errors.New("destination exists")

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
func (d *Dir) Snapshot(dst string) (err error) {
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("shardfile: snapshot %s: %w", dst, ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("shardfile: snapshot: %w", err)
	}
	parent := filepath.Dir(filepath.Clean(dst))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dst)+".snapshot-*")
	if err != nil {
		return fmt.Errorf("shardfile: snapshot: %w", noSpace(err))
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("shardfile: snapshot: %w", err)
	}
	for i, m := range d.maps {
		p := filepath.Join(tmp, ShardName(i))
		if err := writeFileSync(p, m); err != nil {
			if isBadAddress(err) { // write(2) from a mapping that lost its pages
				return fmt.Errorf("shardfile: snapshot: %s: %w", filepath.Join(d.path, ShardName(i)), ErrFault)
			}
			return fmt.Errorf("shardfile: snapshot %s: %w", p, noSpace(err))
		}
	}
	tf, err := os.Open(tmp)
	if err != nil {
		return fmt.Errorf("shardfile: snapshot: %w", err)
	}
	defer tf.Close()
	if err := writeMeta(tmp, tf, d.meta); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("shardfile: snapshot: %w", err)
	}
	return syncDir(parent)
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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
