package linefilter_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/linefilter"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// MaxLine over MaxLineLimit is refused at once, whatever the input: before
// the limit existed, a MaxLine near 2^62 overflowed the block size and the
// reader spun forever on the first line over 1 MiB.
func TestFilterMaxLineLimit(t *testing.T) {
	long := strings.Repeat("x", 2<<20) + "\nhttp://after.example/\n"
	for _, max := range []int{linefilter.MaxLineLimit + 1, 1 << 62, math.MaxInt} {
		f := linefilter.Filter{State: newSet(t), Signer: signature.NewSigner(signature.IEEE, signature.Safe), MaxLine: max}
		done := make(chan error, 1)
		go func() { done <- f.Run(context.Background(), &bytes.Buffer{}, strings.NewReader(long), "in.txt") }()
		select {
		case err := <-done:
			if !errors.Is(err, linefilter.ErrMaxLine) {
				t.Fatalf("MaxLine %d: %v, want ErrMaxLine", max, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("MaxLine %d: Run still busy after 10 s", max)
		}
	}
}

// At the limit itself, a line one byte longer is skipped and counted, and
// the next line is still decided.
func TestFilterAtMaxLineLimit(t *testing.T) {
	in := strings.Repeat("x", linefilter.MaxLineLimit+1) + "\nhttp://after.example/\n"
	out, warns := run(t, newSet(t), linefilter.Filter{MaxLine: linefilter.MaxLineLimit}, in, false)
	if out != "http://after.example/\n" || len(warns) != 1 || warns[0].line != 1 {
		t.Fatalf("output %q, warnings %+v", out, warns)
	}
}

// Cancelling the context ends Run at once even while its Read is blocked
// on an idle input, with what was decided already written.
func TestFilterCancelWhileReadBlocks(t *testing.T) {
	for _, n := range []int{0, 3} {
		pr, pw := io.Pipe()
		defer pw.Close()
		f := linefilter.Filter{State: inFlight(newSet(t), n), Signer: signature.NewSigner(signature.IEEE, signature.Safe)}
		ctx, cancel := context.WithCancel(context.Background())
		out := &lockedWriter{}
		done := make(chan error, 1)
		go func() { done <- f.Run(ctx, out, pr, "-") }()
		pw.Write([]byte("http://idle.example/\n"))
		deadline := time.Now().Add(10 * time.Second)
		for out.String() != "http://idle.example/\n" && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) || out.String() != "http://idle.example/\n" {
				t.Fatalf("in flight %d: %v, output %q", n, err, out.String())
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("in flight %d: Run still blocked 5 s after cancel", n)
		}
		// The Filter runs again while the first reader is still blocked;
		// that reader then gets data into its own buffer, not the new
		// Run's (run with -race).
		var again bytes.Buffer
		if err := f.Run(context.Background(), &again, strings.NewReader("http://second.example/\n"), "-"); err != nil || again.String() != "http://second.example/\n" {
			t.Fatalf("in flight %d: second run: %v %q", n, err, again.String())
		}
		pw.Write([]byte("http://late.example/\n"))
		pw.Close()
	}
}

// lockedWriter is written by Run and read by the test; it flushes as a
// bufio.Writer would, so that Run writes on every drained block.
type lockedWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) Flush() error { return nil }

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
