package statetest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/urldedupd/urldedupd/internal/format"
)

// Disk is what a state directory's shards held when TakeDisk read them:
// the 4 KiB pages of each shard that are not all zero. Durability tests
// write it back (Restore) to play a power loss: the disk as it was when it
// was taken, whatever the page cache has been given since.
type Disk map[int]map[int64][]byte

const pageSize = 4096

// TakeDisk records the shards of the state directory dir as they are now.
func TakeDisk(tb testing.TB, dir string) Disk {
	tb.Helper()
	d := Disk{}
	zero := make([]byte, pageSize)
	for i := 0; i < format.Shards; i++ {
		b, err := os.ReadFile(filepath.Join(dir, format.ShardName(i)))
		if err != nil {
			tb.Fatal(err)
		}
		for off := int64(0); off+pageSize <= int64(len(b)); off += pageSize {
			if p := b[off : off+pageSize]; !bytes.Equal(p, zero) {
				if d[i] == nil {
					d[i] = map[int64][]byte{}
				}
				d[i][off] = bytes.Clone(p)
			}
		}
	}
	return d
}

// Restore writes d back into the shards of dir, in place (no file is
// truncated or replaced), and returns how many pages it changed. Nothing
// may have the state open.
func (d Disk) Restore(tb testing.TB, dir string) int {
	tb.Helper()
	zero := make([]byte, pageSize)
	changed := 0
	for i := 0; i < format.Shards; i++ {
		path := filepath.Join(dir, format.ShardName(i))
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			tb.Fatal(err)
		}
		for off := int64(0); off+pageSize <= int64(len(b)); off += pageSize {
			want := d[i][off]
			if want == nil {
				want = zero
			}
			if !bytes.Equal(b[off:off+pageSize], want) {
				if _, err := f.WriteAt(want, off); err != nil {
					f.Close()
					tb.Fatal(err)
				}
				changed++
			}
		}
		if err := f.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return changed
}
