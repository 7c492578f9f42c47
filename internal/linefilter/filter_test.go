package linefilter_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/linefilter"
	"github.com/urldedupd/urldedupd/internal/racetest"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// newSet opens a new local state: it answers at once.
func newSet(t testing.TB) *state.State {
	t.Helper()
	return statetest.Bitmap(t)
}

// batched is a real decider asked as a remote one is: n batches in flight.
type batched struct {
	layout.Decider
	n int
}

func (b batched) InFlight() int { return b.n }

// inFlight is d asked with n batches in flight, or d itself for n 0.
func inFlight(d state.Decider, n int) state.Decider {
	if n == 0 {
		return d
	}
	return batched{d, n}
}

type warning struct {
	name string
	line uint64
}

func run(t *testing.T, set state.Decider, f linefilter.Filter, input string, oneByte bool) (string, []warning) {
	t.Helper()
	var warns []warning
	f.State, f.Signer = set, signature.NewSigner(signature.IEEE, signature.Safe)
	f.Warn = func(name string, line uint64, msg string) { warns = append(warns, warning{name, line}) }
	var out bytes.Buffer
	r := iotestReader(input, oneByte)
	if err := f.Run(context.Background(), &out, r, "in.txt"); err != nil {
		t.Fatal(err)
	}
	return out.String(), warns
}

func iotestReader(s string, oneByte bool) interface{ Read([]byte) (int, error) } {
	if oneByte {
		return iotest.OneByteReader(strings.NewReader(s))
	}
	return strings.NewReader(s)
}

func TestFilterOutputs(t *testing.T) {
	input := "http://a.com/1\nHTTP://A.COM:80/1\r\n\n  \nhttp://b.com/\nhttp://a.com/1#x\nnot a url %zz\nnot a url %zz"
	tests := []struct {
		name string
		f    linefilter.Filter
		want string
	}{
		{"new", linefilter.Filter{}, "http://a.com/1\nhttp://b.com/\nnot a url %zz\n"},
		{"dups", linefilter.Filter{Output: linefilter.Dups}, "HTTP://A.COM:80/1\nhttp://a.com/1#x\nnot a url %zz\n"},
		{"mark", linefilter.Filter{Output: linefilter.Mark},
			"new\thttp://a.com/1\ndup\tHTTP://A.COM:80/1\nnew\thttp://b.com/\ndup\thttp://a.com/1#x\nnew\tnot a url %zz\ndup\tnot a url %zz\n"},
	}
	for _, tt := range tests {
		for _, cfg := range []struct{ oneByte, window bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			t.Run(fmt.Sprintf("%s/onebyte=%v/window=%v", tt.name, cfg.oneByte, cfg.window), func(t *testing.T) {
				n := 0
				if cfg.window {
					n = 3
				}
				got, _ := run(t, inFlight(newSet(t), n), tt.f, input, cfg.oneByte)
				if got != tt.want {
					t.Fatalf("got\n%q\nwant\n%q", got, tt.want)
				}
			})
		}
	}
}

func TestFilterStatsAndLongLines(t *testing.T) {
	long := "http://x.com/" + strings.Repeat("a", 100)
	input := "http://a.com/\n" + long + "\n\nhttp://b.com/\n" + long + "\nhttp://a.com/"
	for _, oneByte := range []bool{false, true} {
		f := linefilter.Filter{MaxLine: 64}
		var warns []warning
		set := newSet(t)
		f.State, f.Signer = set, signature.NewSigner(signature.IEEE, signature.Safe)
		f.Warn = func(name string, line uint64, msg string) { warns = append(warns, warning{name, line}) }
		var out bytes.Buffer
		if err := f.Run(context.Background(), &out, iotestReader(input, oneByte), "in.txt"); err != nil {
			t.Fatal(err)
		}
		if out.String() != "http://a.com/\nhttp://b.com/\n" {
			t.Fatalf("output %q", out.String())
		}
		want := []warning{{"in.txt", 2}, {"in.txt", 5}}
		if fmt.Sprint(warns) != fmt.Sprint(want) {
			t.Fatalf("warnings %v, want %v", warns, want)
		}
		s := f.Stats
		if s.Lines != 6 || s.New != 2 || s.Dup != 1 || s.Empty != 1 || s.TooLong != 2 || s.Invalid != 0 {
			t.Fatalf("stats %+v", s)
		}
	}
}

// Lines longer than the read block still split right, and an over-long
// line spanning many blocks is skipped whole.
func TestFilterBlockBoundaries(t *testing.T) {
	var in strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&in, "http://example.com/page/%d\n", i%150000)
	}
	in.WriteString(strings.Repeat("z", 3<<20) + "\nhttp://last.example/\n")
	for _, inFlight := range []int{0, 4} {
		t.Run(fmt.Sprintf("inflight=%d", inFlight), func(t *testing.T) {
			testBlockBoundaries(t, in.String(), inFlight)
		})
	}
}

func testBlockBoundaries(t *testing.T, in string, n int) {
	got, warns := run(t, inFlight(newSet(t), n), linefilter.Filter{}, in, false)
	if n := strings.Count(got, "\n"); n != 150001 {
		t.Fatalf("%d lines out, want 150001", n)
	}
	if len(warns) != 1 || warns[0].line != 200001 {
		t.Fatalf("warnings %v", warns)
	}
	if !strings.HasSuffix(got, "http://example.com/page/149999\nhttp://last.example/\n") {
		t.Fatalf("tail %q", got[len(got)-60:])
	}
}

func TestFilterDryRun(t *testing.T) {
	set := newSet(t)
	got, _ := run(t, set, linefilter.Filter{DryRun: true}, "http://a/\nhttp://a/\n", false)
	if r, err := set.Report(context.Background()); err != nil || got != "http://a/\nhttp://a/\n" || *r.BitsSet != 0 {
		t.Fatalf("dry run: %q, %+v, %v", got, r, err)
	}
}

// Run allocates a fixed handful of things (its goroutine and channels),
// and nothing per line: 10,000 and 100,000 lines cost the same.
func TestFilterAllocations(t *testing.T) {
	// Run's goroutines are raced by TestFilterInFlightSameAnswers.
	racetest.SkipAllocations(t)
	set := newSet(t)
	f := &linefilter.Filter{State: set, Signer: signature.NewSigner(signature.IEEE, signature.Safe)}
	allocs := func(lines int) float64 {
		var in strings.Builder
		for i := range lines {
			fmt.Fprintf(&in, "http://example.com/%d\n", i)
		}
		data := in.String()
		var out bytes.Buffer
		out.Grow(len(data))
		f.Run(context.Background(), &out, strings.NewReader(data), "x") // grow buffers once
		return testing.AllocsPerRun(5, func() {
			out.Reset()
			f.Run(context.Background(), &out, strings.NewReader(data), "x")
		})
	}
	small, large := allocs(10_000), allocs(100_000)
	if small != large || large > 16 {
		t.Fatalf("%v allocations for 10,000 lines, %v for 100,000", small, large)
	}
}

// One Filter over several inputs (filter FILE FILE...) decides them all,
// across reused blocks.
func TestFilterSeveralRuns(t *testing.T) {
	var in strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&in, "http://example.com/%d\n", i)
	}
	f := &linefilter.Filter{State: newSet(t), Signer: signature.NewSigner(signature.IEEE, signature.Safe), Output: linefilter.Mark}
	for run := range 3 {
		var out bytes.Buffer
		if err := f.Run(context.Background(), &out, strings.NewReader(in.String()), "x"); err != nil {
			t.Fatal(err)
		}
		want := "new\t"
		if run > 0 {
			want = "dup\t"
		}
		if n := strings.Count(out.String(), want); n != 100_000 {
			t.Fatalf("run %d: %d lines %q, want 100000", run, n, want)
		}
	}
	if f.Stats.Lines != 300_000 || f.Stats.New != 100_000 || f.Stats.Dup != 200_000 {
		t.Fatalf("stats %+v", f.Stats)
	}
}

// With batches in flight, the answers and their order are those of one
// batch at a time, across block boundaries and with repeats in flight.
func TestFilterInFlightSameAnswers(t *testing.T) {
	var in strings.Builder
	for i := range 300_000 {
		id := i
		if i%10 < 4 {
			id = i - 1 - i%777 // a recent URL again: often in a batch in flight
		}
		fmt.Fprintf(&in, "http://h%d.example/%d\n", id%97, id)
	}
	f := linefilter.Filter{Output: linefilter.Mark}
	want, _ := run(t, newSet(t), f, in.String(), false)
	got, _ := run(t, inFlight(newSet(t), 8), f, in.String(), false)
	if got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d: %q with 8 in flight, %q with one", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines with 8 in flight, %d with one", len(gl), len(wl))
	}
}

// slowSet is a real Set whose batches take a while, like a remote one.
type slowSet struct{ set *state.State }

func (s slowSet) InFlight() int { return 4 }

func (s slowSet) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	time.Sleep(2 * time.Millisecond)
	return s.set.Decide(ctx, sigs, seen, dryRun)
}

// trickle hands out its data 4 KiB per read, pausing before each, as a
// pipe from a slow producer does.
type trickle struct{ data []byte }

func (t *trickle) Read(p []byte) (int, error) {
	if len(t.data) == 0 {
		return 0, io.EOF
	}
	time.Sleep(200 * time.Microsecond)
	n := copy(p[:min(len(p), 4096)], t.data)
	t.data = t.data[n:]
	return n, nil
}

// Input that arrives a little at a time makes every block a short one, and
// blocks go back to the reader while it waits for input: with batches in
// flight, every line is still written once, in order (run with -race).
func TestFilterInFlightSlowInput(t *testing.T) {
	var in bytes.Buffer
	for i := range 30_000 {
		fmt.Fprintf(&in, "http://slow.example/%d\n", i%20_000)
	}
	f := linefilter.Filter{State: slowSet{newSet(t)}, Signer: signature.NewSigner(signature.IEEE, signature.Safe),
		Output: linefilter.Mark}
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- f.Run(context.Background(), &out, &trickle{in.Bytes()}, "slow") }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("filter did not finish within 60 s")
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 30_000 {
		t.Fatalf("%d lines out, want 30000", len(lines))
	}
	for i, l := range lines {
		want := fmt.Sprintf("new\thttp://slow.example/%d", i%20_000)
		if i >= 20_000 {
			want = "dup" + want[3:]
		}
		if l != want {
			t.Fatalf("line %d: %q, want %q", i+1, l, want)
		}
	}
}
