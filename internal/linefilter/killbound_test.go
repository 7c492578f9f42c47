package linefilter_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/urldedupd/urldedupd/internal/linefilter"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// flushWriter buffers what is written until Flush, as a bufio.Writer does,
// and counts the lines flushed: what a process killed now would have
// printed.
type flushWriter struct {
	mu      sync.Mutex
	pending bytes.Buffer
	flushed int
}

func (w *flushWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pending.Write(p)
}

func (w *flushWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushed += bytes.Count(w.pending.Bytes(), []byte("\n"))
	w.pending.Reset()
	return nil
}

func (w *flushWriter) lines() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushed
}

// watched decides with d and, as each batch starts, measures how many URLs
// were decided (recorded as seen) but not yet flushed to w: what a kill at
// that moment would cost.
type watched struct {
	d        state.Decider
	w        *flushWriter
	mu       sync.Mutex
	decided  int
	maxOwing int
}

func (v *watched) InFlight() int { return v.d.InFlight() }

func (v *watched) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	v.mu.Lock()
	v.maxOwing = max(v.maxOwing, v.decided-v.w.lines())
	v.mu.Unlock()
	err := v.d.Decide(ctx, sigs, seen, dryRun)
	v.mu.Lock()
	v.decided += len(sigs)
	v.mu.Unlock()
	return err
}

// A batch's lines are flushed before the next batch is decided, so a kill
// costs at most the batch in flight (with n in flight, those n): its URLs
// are recorded but their lines may not be printed (issue 19, item 11: the
// 256 KiB output buffer held thousands). Input that never pauses (no
// flush for a drained read) in several blocks.
func TestFilterKillCostsOneBatch(t *testing.T) {
	var in strings.Builder
	for i := range 60_000 {
		fmt.Fprintf(&in, "http://bound.example.com/a/rather/long/path/%d\n", i)
	}
	for _, n := range []int{0, 4} {
		w := &flushWriter{}
		v := &watched{d: inFlight(newSet(t), n), w: w}
		f := linefilter.Filter{State: v, Signer: signature.NewSigner(signature.IEEE, signature.Safe), Output: linefilter.Mark}
		if err := f.Run(context.Background(), w, strings.NewReader(in.String()), "in"); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if w.lines() != 60_000 {
			t.Fatalf("in flight %d: %d lines, want 60000", n, w.lines())
		}
		// Before a batch is decided, the batches decided before it are
		// flushed, but for those still in flight (n-1 with a window of n).
		bound := max(n-1, 0) * linefilter.BatchSize
		if v.maxOwing > bound {
			t.Errorf("in flight %d: %d URLs decided but not flushed when a batch began; want at most %d", n, v.maxOwing, bound)
		}
	}
}
