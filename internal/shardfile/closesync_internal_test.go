package shardfile

import (
	"path/filepath"
	"testing"
)

// Close waits for every shard to be on disk (one msync each) unless
// NoCloseSync says to leave them to the kernel; Sync always writes them.
func TestCloseSync(t *testing.T) {
	real := syncMap
	defer func() { syncMap = real }()
	calls := 0
	syncMap = func(b []byte) error { calls++; return real(b) }
	for _, tt := range []struct {
		noSync bool
		want   int
	}{{false, 256}, {true, 0}} {
		d, err := Open(filepath.Join(t.TempDir(), "s"), &Options{Create: true, NoCloseSync: tt.noSync})
		if err != nil {
			t.Fatal(err)
		}
		d.Shard(3)[7] = 1
		calls = 0
		if err := d.Sync(); err != nil || calls != 256 {
			t.Fatalf("NoCloseSync %v: Sync: %v, %d msyncs, want 256", tt.noSync, err, calls)
		}
		calls = 0
		if err := d.Close(); err != nil || calls != tt.want {
			t.Fatalf("NoCloseSync %v: Close: %v, %d msyncs, want %d", tt.noSync, err, calls, tt.want)
		}
	}
}
