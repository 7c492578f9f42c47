package audit_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/audit"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// newBloom opens a new local Bloom state of 1 MiB: a layout that takes a
// lock per batch decided.
func newBloom(t *testing.T) *state.State {
	t.Helper()
	m, err := state.Init{Spec: format.Spec{Layout: format.Bloom, Algorithm: signature.SipHash, Mode: signature.Safe}, Size: 1 << 20}.Meta(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(context.Background(), filepath.Join(t.TempDir(), "b"), &state.Options{Create: true, Spec: &m.Spec, New: &m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// counting is a local state (InFlight 0) that counts its batches.
type counting struct {
	st      *state.State
	batches atomic.Int64
	most    atomic.Int64
}

func (c *counting) InFlight() int { return c.st.InFlight() }

func (c *counting) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	c.batches.Add(1)
	for {
		m := c.most.Load()
		if int64(len(sigs)) <= m || c.most.CompareAndSwap(m, int64(len(sigs))) {
			break
		}
	}
	return c.st.Decide(ctx, sigs, seen, dryRun)
}

// syncBuffer is an output the Log's timer may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// A live capture on a local Bloom state decides in batches, not one
// request at a time (a lock each), and its records are those of deciding
// each request at once, in the same order.
func TestLiveLocalBatches(t *testing.T) {
	if o := audit.LiveOptions(newSet(t)); o == nil || o.Batch <= 1 || o.MaxDelay > 10*time.Millisecond {
		t.Fatalf("LiveOptions for a local state: %+v; want batches of more than one, a few ms at most", o)
	}
	rs := manyRequests(3000)
	signer := signature.NewSigner(signature.IEEE, signature.Safe)
	var once, batched syncBuffer
	one := &counting{st: newBloom(t)}
	live := &counting{st: newBloom(t)}
	l1 := audit.New(one, signer, &once, audit.JSON, false, nil)
	// The batch bound by size only here, so that the count of batches
	// does not depend on how fast this machine is.
	lb := audit.New(live, signer, &batched, audit.JSON, false, &audit.Options{Batch: audit.LiveBatch, MaxDelay: time.Hour})
	for _, r := range rs {
		l1.Request(r)
		lb.Request(r)
	}
	if err := errorsJoin(l1.Close(), lb.Close()); err != nil {
		t.Fatal(err)
	}
	if n := one.batches.Load(); n != int64(len(rs)) {
		t.Fatalf("at once: %d batches for %d requests", n, len(rs))
	}
	want := (len(rs) + audit.LiveBatch - 1) / audit.LiveBatch
	if n, most := live.batches.Load(), live.most.Load(); n != int64(want) || most != audit.LiveBatch {
		t.Fatalf("live: %d batches (largest %d) for %d requests; want %d of up to %d", n, most, len(rs), want, audit.LiveBatch)
	}
	if batched.String() != once.String() || lb.Counts != l1.Counts {
		t.Fatalf("batched records differ (%d bytes, %+v) from those decided at once (%d bytes, %+v)",
			len(batched.String()), lb.Counts, len(once.String()), l1.Counts)
	}
}

// A lone request on a quiet wire is decided and written by the timer,
// with no further request and no Flush.
func TestLiveLoneRequestDecided(t *testing.T) {
	st := &counting{st: newBloom(t)}
	var out syncBuffer
	l := audit.New(st, signature.NewSigner(signature.IEEE, signature.Safe), &out, audit.All, false, audit.LiveOptions(st))
	defer l.Close()
	start := time.Now()
	l.Request(requests()[0])
	for st.batches.Load() == 0 || out.String() == "" {
		if time.Since(start) > time.Minute {
			t.Fatalf("a lone request not decided within a minute (%d batches, %q written)", st.batches.Load(), out.String())
		}
		time.Sleep(time.Millisecond)
	}
	if got := out.String(); got != "new\thttp://a.example/x\n" {
		t.Fatalf("written %q", got)
	}
	if c := l.CountsNow(); c.New != 1 || c.Requests != 1 {
		t.Fatalf("counts %+v", c)
	}
	t.Logf("decided and written %v after the request (bound %v)", time.Since(start), audit.LiveMaxDelay)
}

func TestLiveNoAllocations(t *testing.T) {
	var out bytes.Buffer
	out.Grow(8 << 20)
	st := newBloom(t)
	l := audit.New(st, signature.NewSigner(signature.IEEE, signature.Safe), &out, audit.JSON, false, audit.LiveOptions(st))
	defer l.Close()
	rs := manyRequests(300)
	run := func() {
		for _, r := range rs {
			l.Request(r)
		}
		l.Flush()
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Fatalf("%v allocations per 300 requests", n)
	}
	if strings.Count(out.String(), "\n") != 22*300 {
		t.Fatalf("%d records, want %d", strings.Count(out.String(), "\n"), 22*300)
	}
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
