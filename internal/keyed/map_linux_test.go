package keyed

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// mapShards maps the 256 shard files of dir MAP_SHARED, creating them
// (sparse, zero) with shardBytes each when missing.
func mapShards(tb testing.TB, dir string, shardBytes int) [][]byte {
	tb.Helper()
	s := make([][]byte, Shards)
	for i := range s {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%02x", i)), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			tb.Fatal(err)
		}
		if fi, _ := f.Stat(); fi.Size() != int64(shardBytes) {
			if err := f.Truncate(int64(shardBytes)); err != nil {
				tb.Fatal(err)
			}
		}
		b, err := unix.Mmap(int(f.Fd()), 0, shardBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		f.Close()
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { unix.Munmap(b) })
		s[i] = b
	}
	return s
}
