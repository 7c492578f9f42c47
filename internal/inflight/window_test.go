package inflight_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/bitcheck"
	"github.com/urldedupd/urldedupd/internal/inflight"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func newSet(t testing.TB) *bitcheck.Set {
	t.Helper()
	d, err := shardfile.Memory(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return bitcheck.New(d)
}

// slow is a real Set whose batches take a random time, so that batches in
// flight finish out of order; it fails the batch holding signature fail.
type slow struct {
	set     *bitcheck.Set
	fail    signature.Signature
	batches atomic.Int64
}

var errInjected = errors.New("injected")

func (s *slow) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	s.batches.Add(1)
	time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
	for _, sig := range sigs {
		if sig == s.fail && sig != 0 {
			return errInjected
		}
	}
	return s.set.Decide(ctx, sigs, seen, dryRun)
}

// stream returns n signatures of which about half repeat a recent one, so
// repeats fall into batches in flight together.
func stream(n int) []signature.Signature {
	r := rand.New(rand.NewPCG(1, 2))
	sigs := make([]signature.Signature, n)
	for i := range sigs {
		if i > 0 && r.IntN(2) == 0 {
			sigs[i] = sigs[max(0, i-1-r.IntN(300))]
		} else {
			sigs[i] = signature.Signature(r.Uint32() | 1)
		}
	}
	return sigs
}

type batch struct{ start, end int }

// decide runs sigs through a Window in batches and returns the answers and
// the first error with the batch it came from.
func decide(t *testing.T, d layout.Decider, sigs []signature.Signature, size, depth int, dryRun bool) ([]bool, batch, error) {
	t.Helper()
	w := inflight.NewWindow[batch](context.Background(), d, depth, dryRun)
	defer w.Close()
	seen := make([]bool, len(sigs))
	for start := 0; start < len(sigs) || w.Len() > 0; {
		if start < len(sigs) && !w.Full() {
			end := min(start+size, len(sigs))
			w.Send(sigs[start:end], seen[start:end], batch{start, end})
			start = end
			continue
		}
		if b, err := w.Recv(); err != nil {
			return seen, b, err
		}
	}
	return seen, batch{}, nil
}

func TestWindowAnswersAsSequential(t *testing.T) {
	sigs := stream(200_000)
	want := make([]bool, len(sigs))
	newSet(t).TestAndSetBatch(sigs, want)
	for _, depth := range []int{0, 1, 2, 8} {
		d := &slow{set: newSet(t)}
		got, _, err := decide(t, d, sigs, 1000, depth, false)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("depth %d: answer %d (signature %08x) is %v, sequential %v", depth, i, uint32(sigs[i]), got[i], want[i])
			}
		}
	}
}

func TestWindowDryRun(t *testing.T) {
	sigs := stream(20_000)
	set := newSet(t)
	set.TestAndSetBatch(sigs[:10_000], make([]bool, 10_000))
	want := make([]bool, len(sigs))
	set.TestBatch(sigs, want)
	d := &slow{set: set}
	got, _, err := decide(t, d, sigs, 500, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("answer %d: %v, want %v", i, got[i], want[i])
		}
	}
	if f, _ := set.Fill(); f.Total() != uint64(countDistinct(sigs[:10_000])) {
		t.Fatalf("dry run set bits: %d set, want %d", f.Total(), countDistinct(sigs[:10_000]))
	}
}

func countDistinct(sigs []signature.Signature) int {
	m := map[signature.Signature]bool{}
	for _, s := range sigs {
		m[s] = true
	}
	return len(m)
}

func TestWindowError(t *testing.T) {
	sigs := stream(50_000)
	const failAt = 30_123
	d := &slow{set: newSet(t), fail: sigs[failAt]}
	first := failAt
	for i, s := range sigs {
		if s == sigs[failAt] {
			first = i
			break
		}
	}
	_, b, err := decide(t, d, sigs, 1000, 4, false)
	if !errors.Is(err, errInjected) {
		t.Fatalf("err %v, want the injected error", err)
	}
	if first < b.start || first >= b.end {
		t.Fatalf("error reported for batch %v; the failing signature first occurs at %d", b, first)
	}
}

func TestWindowRepeatsNotSent(t *testing.T) {
	sig := signature.Signature(0xdeadbeef)
	sigs := []signature.Signature{sig, sig, 1, sig}
	d := &slow{set: newSet(t)}
	w := inflight.NewWindow[int](context.Background(), d, 4, false)
	defer w.Close()
	seen := make([]bool, 4)
	w.Send(sigs[:2], seen[:2], 0)
	w.Send(sigs[2:], seen[2:], 1)
	for range 2 {
		if _, err := w.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	if seen[0] || !seen[1] || seen[2] || !seen[3] {
		t.Fatalf("answers %v, want [false true false true]", seen)
	}
	if w.Stats.Sent != 2 || w.Stats.Repeated != 2 {
		t.Fatalf("stats %+v, want 2 sent and 2 repeats", w.Stats)
	}
}

func TestWindowNoAllocations(t *testing.T) {
	set := newSet(t)
	w := inflight.NewWindow[int](context.Background(), set, 2, false)
	defer w.Close()
	sigs := stream(1000)
	seen := make([]bool, len(sigs))
	run := func() {
		w.Send(sigs[:500], seen[:500], 0)
		w.Send(sigs[500:], seen[500:], 1)
		w.Recv()
		w.Recv()
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%v allocations per two batches", n)
	}
	at := inflight.NewWindow[int](context.Background(), set, 0, false)
	defer at.Close()
	once := func() {
		at.Send(sigs[:500], seen[:500], 0)
		at.Recv()
		at.Send(sigs[500:], seen[500:], 1)
		at.Recv()
	}
	if n := testing.AllocsPerRun(100, once); n != 0 {
		t.Fatalf("depth 0: %v allocations per two batches", n)
	}
}

// At depth 0 Send decides at once: the batch is ready before Send
// returns, and the window holds one batch.
func TestWindowAtOnce(t *testing.T) {
	d := &slow{set: newSet(t)}
	w := inflight.NewWindow[string](context.Background(), d, 0, false)
	defer w.Close()
	if w.Depth() != 0 || w.Full() || w.Ready() {
		t.Fatalf("new depth-0 window: depth %d, full %v, ready %v", w.Depth(), w.Full(), w.Ready())
	}
	sigs := []signature.Signature{7, 7, 9}
	seen := make([]bool, 3)
	w.Send(sigs, seen, "a")
	if d.batches.Load() != 1 || !w.Ready() || !w.Full() || w.Len() != 1 {
		t.Fatalf("after Send: %d batches decided, ready %v, full %v, len %d", d.batches.Load(), w.Ready(), w.Full(), w.Len())
	}
	tag, err := w.Recv()
	if err != nil || tag != "a" {
		t.Fatalf("Recv: %q, %v", tag, err)
	}
	if seen[0] || !seen[1] || seen[2] {
		t.Fatalf("answers %v, want [false true false]", seen)
	}
	d.fail = 9
	w.Send(sigs[2:], seen[2:], "b")
	if _, err := w.Recv(); !errors.Is(err, errInjected) {
		t.Fatalf("Recv: %v, want the injected error", err)
	}
}
