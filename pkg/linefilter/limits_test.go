package linefilter_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/pkg/linefilter"
	"github.com/urldedupd/urldedupd/pkg/signature"
)

// MaxLine over MaxLineLimit is refused at once, whatever the input: before
// the limit existed, a MaxLine near 2^62 overflowed the block size and the
// reader spun forever on the first line over 1 MiB.
func TestFilterMaxLineLimit(t *testing.T) {
	long := strings.Repeat("x", 2<<20) + "\nhttp://after.example/\n"
	for _, max := range []int{linefilter.MaxLineLimit + 1, 1 << 62, math.MaxInt} {
		f := linefilter.Filter{Set: newSet(t), Signer: signature.NewSigner(signature.IEEE, signature.Safe), MaxLine: max}
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
