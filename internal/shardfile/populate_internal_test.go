package shardfile

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// Populate maps every page of every shard at Open: the resident size of
// a shard's mapping (/proc/self/smaps) is the whole shard; without it, a
// shard nobody touched has none; a read-only open is not populated.
func TestPopulate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	for _, tt := range []struct {
		name      string
		opts      Options
		populated bool
	}{
		{"default", Options{Create: true}, false},
		{"populate", Options{Populate: true}, true},
		{"populate read-only", Options{Populate: true, ReadOnly: true}, false},
	} {
		tt.opts.NoCloseSync = true
		d, err := Open(path, &tt.opts)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for _, i := range []int{0, 7, 255} {
			m := d.maps[i]
			rss := mappingRSS(t, uintptr(unsafe.Pointer(&m[0])))
			if tt.populated && rss != int64(len(m)) || !tt.populated && rss != 0 {
				t.Errorf("%s: shard %d: %d bytes of %d resident", tt.name, i, rss, len(m))
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// mappingRSS is the Rss of the mapping that starts at addr, in bytes.
func mappingRSS(t *testing.T, addr uintptr) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", addr)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		fields := strings.Fields(l)
		if len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") { // a mapping's first line
			in = strings.HasPrefix(fields[0], start)
			continue
		}
		if v, ok := strings.CutPrefix(l, "Rss:"); in && ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return 0
}
