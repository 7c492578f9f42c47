package shardfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/shardfile"
)

// On tmpfs a new state's shards are allocated, not written: each holds
// its whole size in blocks (so a full tmpfs fails the creation, as
// cmd/urldedupd's TestCreateNoSpace checks, and never a later page
// fault), reads as zeros, and takes the bits set in it.
func TestCreateOnTmpfsAllocates(t *testing.T) {
	base, err := os.MkdirTemp("/dev/shm", "urldedupd-tmpfs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	var st unix.Statfs_t
	if err := unix.Statfs(base, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Fatalf("/dev/shm is not a tmpfs (%x, %v)", st.Type, err)
	}
	dir := filepath.Join(base, "s")
	d, err := shardfile.Open(dir, &shardfile.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range format.Shards {
		p := filepath.Join(dir, format.ShardName(i))
		if n := allocated(t, p); n < format.ShardBytes {
			t.Fatalf("%s: %d of %d bytes allocated", p, n, format.ShardBytes)
		}
		for j, b := range d.Shard(i) {
			if b != 0 {
				t.Fatalf("%s: byte %d is %#x in a new state", p, j, b)
			}
		}
	}
	d.Shard(0x7f)[12345] |= 4
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "7f"))
	if err != nil || len(b) != format.ShardBytes || b[12345] != 4 {
		t.Fatalf("7f after a bit was set: %d bytes, %v", len(b), err)
	}
}
