package bitcheck_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/urldedupd/urldedupd/internal/racetest"

	"github.com/urldedupd/urldedupd/internal/bitcheck"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func open(t testing.TB) (*bitcheck.Set, *shardfile.Dir) {
	t.Helper()
	d, err := shardfile.Open(filepath.Join(t.TempDir(), "state"), &shardfile.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return bitcheck.New(d), d
}

func TestTestAndSet(t *testing.T) {
	s, _ := open(t)
	sig := signature.Signature(0xa6643cc9)
	if s.Test(sig) || s.TestAndSet(sig) || !s.TestAndSet(sig) || !s.Test(sig) {
		t.Fatal("want new, then dup")
	}
	if s.Test(sig^1) || s.Test(sig^(1<<24)) {
		t.Fatal("neighbouring bits set")
	}
	if c := s.Counts(); c.New != 1 || c.Dup != 1 {
		t.Fatalf("counts %+v", c)
	}
}

// The bit for offset b of shard s is bit b%8 of byte b/8 of file s.
func TestOnDiskBitOrder(t *testing.T) {
	s, d := open(t)
	sigs := []signature.Signature{0x00000000, 0x00000009, 0x7f00003f, 0xffffffff}
	for _, sig := range sigs {
		s.TestAndSet(sig)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, sig := range sigs {
		b, err := os.ReadFile(filepath.Join(d.Path(), format.ShardName(int(sig.Shard()))))
		if err != nil {
			t.Fatal(err)
		}
		if b[sig.Bit()/8]&(1<<(sig.Bit()%8)) == 0 {
			t.Errorf("%v: byte %d of shard %02x is %08b", sig, sig.Bit()/8, sig.Shard(), b[sig.Bit()/8])
		}
	}
}

// The batch form answers as TestAndSet in order would, including repeats
// inside one batch, checked against a map.
func TestBatchMatchesMap(t *testing.T) {
	s, _ := open(t)
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[signature.Signature]bool{}
	sigs := make([]signature.Signature, 1000)
	seen := make([]bool, len(sigs))
	for round := 0; round < 50; round++ {
		for i := range sigs {
			sigs[i] = signature.Signature(rng.Uint32() % 20000) // many repeats
		}
		fresh := s.TestAndSetBatch(sigs, seen)
		n := 0
		for i, sig := range sigs {
			if seen[i] != want[sig] {
				t.Fatalf("round %d: sig %v: seen=%v, want %v", round, sig, seen[i], want[sig])
			}
			if !want[sig] {
				n++
			}
			want[sig] = true
		}
		if fresh != n {
			t.Fatalf("round %d: %d new, want %d", round, fresh, n)
		}
	}
	s.TestBatch(sigs, seen)
	for i := range sigs {
		if !seen[i] {
			t.Fatal("TestBatch missed a set bit")
		}
	}
	if c := s.Counts(); c.New != uint64(len(want)) || c.New+c.Dup != 50*1000 {
		t.Fatalf("counts %+v, %d distinct", c, len(want))
	}
}

// Many goroutines set the same bits: each signature is new exactly once.
// Run with -race.
func TestExactlyOnceConcurrent(t *testing.T) {
	s, _ := open(t)
	const distinct, workers = 5000, 8
	var newCount [distinct]atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			sigs := make([]signature.Signature, 64)
			idx := make([]uint32, 64)
			seen := make([]bool, 64)
			for range 200 {
				for i := range sigs {
					idx[i] = rng.Uint32N(distinct)
					sigs[i] = signature.Signature(idx[i] * 0x9e3779b1) // spread over shards
				}
				if w%2 == 0 {
					s.TestAndSetBatch(sigs, seen)
				} else {
					for i, sig := range sigs {
						seen[i] = s.TestAndSet(sig)
					}
				}
				for i := range sigs {
					if !seen[i] {
						newCount[idx[i]].Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	for i := range newCount {
		if n := newCount[i].Load(); n > 1 {
			t.Fatalf("signature %d reported new %d times", i, n)
		}
	}
	if f, err := s.Fill(); err != nil || s.Counts().New != f.Total() {
		t.Fatalf("%d new but %d bits set (%v)", s.Counts().New, f.Total(), err)
	}
}

func TestFill(t *testing.T) {
	racetest.SkipSequential(t)
	s, _ := open(t)
	for i := range uint32(3000) {
		s.TestAndSet(signature.Signature(i<<20 | i))
	}
	f, err := s.Fill()
	if err != nil {
		t.Fatal(err)
	}
	if f.Total() != 3000 || f.Shard[0] != 16 || f.Shard[0xbb] != 8 || f.Shard[0xbc] != 0 {
		t.Fatalf("total %d, shard 00 %d, bb %d, bc %d", f.Total(), f.Shard[0], f.Shard[0xbb], f.Shard[0xbc])
	}
	if math.Abs(f.Estimate()-3000) > 0.01 || f.Ratio() != 3000/bitcheck.Bits {
		t.Fatalf("estimate %v ratio %v", f.Estimate(), f.Ratio())
	}
	full := bitcheck.Fill{}
	for i := range full.Shard {
		full.Shard[i] = signature.BitsPerShard
	}
	if !math.IsInf(full.Estimate(), 1) || full.Ratio() != 1 {
		t.Fatal("full bitmap")
	}
}

func TestReadOnlySetPanicsOnWrite(t *testing.T) {
	_, d := open(t)
	ro, err := shardfile.Open(d.Path(), &shardfile.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	s := bitcheck.New(ro)
	if s.Test(1) {
		t.Fatal("bit set in a new state")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("TestAndSet on a read-only set did not panic")
		}
	}()
	s.TestAndSet(1)
}

func TestNoAllocs(t *testing.T) {
	s, _ := open(t)
	sigs := []signature.Signature{1, 2, 3, 0xffffffff}
	seen := make([]bool, len(sigs))
	if n := testing.AllocsPerRun(1000, func() { s.TestAndSet(12345) }); n != 0 {
		t.Errorf("TestAndSet: %v allocs", n)
	}
	if n := testing.AllocsPerRun(1000, func() { s.TestAndSetBatch(sigs, seen) }); n != 0 {
		t.Errorf("TestAndSetBatch: %v allocs", n)
	}
}
