package keyedwindow_test

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/keyedwindow"
	"github.com/urldedupd/urldedupd/internal/window"
)

// BenchmarkAgainstKeyed decides the same batches of 1,024 located URLs on
// a plain keyed table and on a windowed one of the same size (512 MiB, 6
// generations, a generation every 2,000 batches; the lock in memory or
// a lock file), so that their ratio is measured in one run: the windowed
// table's lock a batch, its whole-pair scan and its sweep, against one
// CAS.
func BenchmarkAgainstKeyed(b *testing.B) {
	const area = 2 << 20
	geo, _ := keyed.NewGeometry(area)
	locs := make([]keyed.Loc, 1<<22)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range locs {
		locs[i] = geo.Locate(rng.Uint64())
	}
	// fault every page in before timing, as a state in use has them
	fault := func(shards [][]byte) {
		for _, sh := range shards {
			for i := 0; i < len(sh); i += 4096 {
				sh[i] = 0
			}
		}
	}
	run := func(b *testing.B, decide func([]keyed.Loc)) {
		b.ReportAllocs()
		off := 0
		for b.Loop() {
			if off+1024 > len(locs) {
				off = 0
			}
			decide(locs[off : off+1024])
			off += 1024
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/URL")
	}
	b.Run("keyed", func(b *testing.B) {
		shards := make([][]byte, keyed.Shards)
		for i := range shards {
			shards[i] = make([]byte, area)
		}
		fault(shards)
		tab, err := keyed.NewTable(shards, false)
		if err != nil {
			b.Fatal(err)
		}
		res := make([]keyed.Result, 1024)
		run(b, func(l []keyed.Loc) { tab.DecideBatch(l, res, false) })
	})
	for _, locker := range []string{"memory", "file"} {
		b.Run("window/"+locker, func(b *testing.B) {
			var batches int64
			clock := func() time.Time { return epoch.Add(time.Duration(batches/2000) * time.Second) }
			spec := window.Spec{Epoch: epoch, Window: 6 * time.Second, Generations: 6, Policy: window.FirstSeen}
			mem := keyedwindow.MemoryShards(area)
			fault(mem)
			var lock window.Locker = new(window.MemoryLocker)
			if locker == "file" {
				l, err := window.OpenFileLocker(filepath.Join(b.TempDir(), "lock"), true)
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				lock = l
			}
			tab, err := keyedwindow.NewTable(spec, mem, lock, keyedwindow.Options{Clock: clock})
			if err != nil {
				b.Fatal(err)
			}
			res := make([]window.Result, 1024)
			run(b, func(l []keyed.Loc) {
				batches++
				if err := tab.DecideBatch(l, res, nil); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
