package shardfile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A bit set in a fresh state makes the next flush write its page, not its
// shard: creation leaves 4 KiB folios in the page cache. The kernel
// charges a process the bytes of each folio it dirties (write_bytes in
// /proc/self/io); eight bits set 256 KiB apart in one shard after a Sync
// are eight pages, where a shard cached as one 2 MiB folio (a file system
// with large folios, the shards written 4 MiB a write) was 2 MiB. The
// state is on /var/tmp: tmpfs, the tests' usual TMPDIR, writes nothing
// back and charges nothing.
func TestFlushWritesPages(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "urldedupd-pages-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	d, err := Open(filepath.Join(base, "s"), &Options{Create: true, NoCloseSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	const bits = 8
	m := d.maps[3]
	if len(m) < bits*256<<10 {
		t.Fatalf("shard of %d bytes; want at least %d", len(m), bits*256<<10)
	}
	before := writeBytes(t)
	for k := range bits {
		m[k*256<<10] |= 1
	}
	charged := writeBytes(t) - before
	if charged == 0 {
		t.Fatalf("no bytes charged for %d pages dirtied: /var/tmp writes nothing back (tmpfs?); this test needs a disk file system there", bits)
	}
	if charged < int64(bits*page) || charged > int64(2*bits*page) {
		t.Errorf("%d bits set in %d pages of one shard dirtied %d bytes; want %d (a page each): the shard is cached in folios larger than a page, and each flush writes them whole", bits, bits, charged, bits*page)
	}
}

// writeBytes is this process's write_bytes from /proc/self/io: the bytes
// it caused to be written back, charged when a folio is dirtied.
func writeBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "write_bytes: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no write_bytes in /proc/self/io")
	return 0
}
