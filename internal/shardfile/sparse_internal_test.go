package shardfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/urldedupd/urldedupd/internal/format"
)

// A writable Open of a state with sparse shards, fallocate failing as a
// file system would: without fallocate (EOPNOTSUPP, ENOSYS: ZFS before
// 2.2, or a compressing one where a fresh shard looks sparse) the state is
// opened and Warn told once, with how many shards; out of space (ENOSPC,
// EDQUOT, where a write through the mapping would fault) or any other
// error it is refused with ErrSparse naming the shard. A read-only Open
// never calls fallocate. (Issue 9 review: every writable open was refused
// when fallocate was unsupported.)
func TestSparseShardWhenFallocateFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	d, err := Open(dir, &Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	sparse := []int{0x07, 0x5a, 0xff}
	for _, i := range sparse {
		p := filepath.Join(dir, format.ShardName(i))
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte{0x80}, 100)
		f.Truncate(format.ShardBytes)
		f.Close()
	}
	defer func(old func(*os.File, int64) error) { allocateFn = old }(allocateFn)
	for _, tc := range []struct {
		name    string
		err     error
		refused bool
	}{
		{"EOPNOTSUPP", unix.EOPNOTSUPP, false},
		{"ENOSYS", unix.ENOSYS, false},
		{"ENOSPC", unix.ENOSPC, true},
		{"EDQUOT", unix.EDQUOT, true},
		{"EIO", unix.EIO, true},
	} {
		calls := 0
		allocateFn = func(*os.File, int64) error { calls++; return tc.err }
		var warned []error
		d, err := Open(dir, &Options{Warn: func(err error) { warned = append(warned, err) }})
		if tc.refused {
			if d != nil || !errors.Is(err, ErrSparse) || !strings.Contains(err.Error(), filepath.Join(dir, "07")) ||
				!strings.Contains(err.Error(), tc.err.Error()) || len(warned) != 0 || calls != 1 {
				t.Errorf("%s: Open: %v (warned %v, %d fallocate calls); want ErrSparse naming shard 07 and the error, after one call", tc.name, err, warned, calls)
			}
			if d != nil {
				d.Close()
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: Open: %v", tc.name, err)
			continue
		}
		if len(warned) != 1 || !errors.Is(warned[0], ErrUnallocated) || calls != len(sparse) ||
			!strings.Contains(warned[0].Error(), "3 of 256 shards (the first "+filepath.Join(dir, "07")+":") ||
			!strings.Contains(warned[0].Error(), tc.err.Error()) {
			t.Errorf("%s: warned %q after %d fallocate calls; want one ErrUnallocated for 3 shards, the first 07, after %d", tc.name, warned, calls, len(sparse))
		}
		b := d.Shard(0x5a)
		if b[100] != 0x80 || b[101] != 0 {
			t.Errorf("%s: content of shard 5a changed", tc.name)
		}
		b[200] = 1 // writable: the holes are ordinary pages while there is space
		d.Close()
	}
	allocateFn = func(*os.File, int64) error { t.Error("fallocate called by a read-only Open"); return nil }
	d, err = Open(dir, &Options{ReadOnly: true, Warn: func(err error) { t.Errorf("read-only Open warned: %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	allocateFn = allocate
	d, err = Open(dir, &Options{Warn: func(err error) { t.Errorf("Open on a file system with fallocate warned: %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}
