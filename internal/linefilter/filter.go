package linefilter

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/inflight"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// Output selects which lines a Filter writes.
type Output int

const (
	// New writes the lines whose URL is new.
	New Output = iota
	// Dups writes the lines whose URL was seen before.
	Dups
	// Mark writes every line, prefixed by "new\t" or "dup\t".
	Mark
)

// DefaultMaxLine is the longest line a Filter accepts by default.
const DefaultMaxLine = 64 << 10

// MaxLineLimit is the largest MaxLine a Filter accepts. Run holds three or
// four blocks of at least 2*MaxLine bytes, so this caps its buffers at
// about 128 MiB.
const MaxLineLimit = 16 << 20

// ErrMaxLine is returned by Run when MaxLine is over MaxLineLimit.
var ErrMaxLine = errors.New("line length limit out of range")

// Stats counts what a Filter has read.
type Stats struct {
	Lines   uint64 // lines read, of every kind
	New     uint64
	Dup     uint64
	Empty   uint64 // blank lines, skipped
	TooLong uint64 // lines over MaxLine, skipped
	Invalid uint64 // lines that are not URLs; signed raw and decided
}

// StatsCounters describes Stats' counters (internal/counter), with the
// words of filter -v's summary.
var StatsCounters = counter.Table[Stats]{
	{Name: "lines", Help: "Lines read, of every kind", Text: "lines", Field: func(s *Stats) *uint64 { return &s.Lines }},
	{Name: "new", Help: "URLs new to the state", Text: "new", Field: func(s *Stats) *uint64 { return &s.New }},
	{Name: "dup", Help: "URLs seen before", Text: "dup", Field: func(s *Stats) *uint64 { return &s.Dup }},
	{Name: "empty", Help: "Blank lines, skipped", Text: "empty", Field: func(s *Stats) *uint64 { return &s.Empty }},
	{Name: "too_long", Help: "Lines over MaxLine, skipped", Text: "too long", Field: func(s *Stats) *uint64 { return &s.TooLong }},
	{Name: "invalid", Help: "Lines that are not URLs; signed raw and decided", Text: "invalid", Field: func(s *Stats) *uint64 { return &s.Invalid }},
}

func (s *Stats) add(o Stats) {
	s.Lines += o.Lines
	s.New += o.New
	s.Dup += o.Dup
	s.Empty += o.Empty
	s.TooLong += o.TooLong
	s.Invalid += o.Invalid
}

// Filter decides URL lines against a state and writes the chosen ones.
//
// Run uses two goroutines: one reads, splits and signs blocks of input, the
// calling one decides and writes them in order. A Filter is not safe for
// concurrent use; several Filters may share a Set.
type Filter struct {
	// State decides. When its InFlight is above 1, Run keeps that many
	// batches in flight to it at once, for a remote state whose round
	// trip is the bottleneck; output keeps the input's order either way.
	State  state.Decider
	Signer *signature.Signer
	Output Output
	// DryRun tests without setting any bit.
	DryRun bool
	// MaxLine is the longest accepted line, without its newline; zero
	// means DefaultMaxLine. Over MaxLineLimit, Run fails with ErrMaxLine.
	MaxLine int
	// Warn, when set, is told about every skipped line, with where it was.
	// It is called from Run's reading goroutine.
	Warn func(name string, line uint64, msg string)

	// Stats accumulates over every Run.
	Stats Stats

	blocks []*block
}

// BatchSize is how many URLs are decided at once. It bounds what a process
// killed mid-run (SIGKILL) can cost: when w has a Flush method, each
// batch's lines are flushed before the next batch is decided, so only the
// batch in flight (with a remote state, the InFlight batches in flight)
// can have been decided, its URLs recorded as seen, without being written.
const BatchSize = 1024

const (
	blockSize = 1 << 20
	nblocks   = 3 // one being read, one being decided, one spare
)

type flusher interface{ Flush() error }

// Run reads r to its end (or until ctx is done), writing the chosen lines
// to w. name is used in warnings ("-" for standard input). When w has a
// Flush method, Run calls it after writing each batch's lines, before the
// next batch is decided (see BatchSize), and so also whenever r has no more
// data for the moment, so that a filter in a pipeline answers as lines
// arrive.
//
// When ctx is done, Run returns its error at once, even while a Read of r
// is blocked (an idle pipe or terminal): what was decided is written, and
// the reading goroutine ends when that Read returns (its buffers are not
// reused by a later Run).
func (f *Filter) Run(ctx context.Context, w io.Writer, r io.Reader, name string) error {
	maxLine := f.MaxLine
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	if maxLine > MaxLineLimit {
		return fmt.Errorf("linefilter: %w: %d bytes, over the limit of %d", ErrMaxLine, maxLine, MaxLineLimit)
	}
	// One loop for every state: a local one answers at once (a window of
	// depth 0), a remote one keeps InFlight batches in flight.
	depth := 0
	if inFlight := f.State.InFlight(); inFlight > 1 {
		depth = inFlight
	}
	n := nblocks
	if depth > 0 {
		n++ // the window may hold the tail of one block and the head of the next
	}
	f.allocBlocks(maxLine, n)
	rd := &reader{r: r, name: name, max: maxLine, signer: f.Signer, warn: f.Warn,
		free: make(chan *block, n), full: make(chan *block, n), stop: make(chan struct{})}
	for _, b := range f.blocks {
		rd.free <- b
	}
	go rd.run(ctx)
	defer close(rd.stop)
	return f.loop(ctx, w, rd, depth)
}

// dropBlocksIf forgets the blocks when Run stops on err while the reader
// may still be reading into one of them.
func (f *Filter) dropBlocksIf(err error) {
	if err != nil {
		f.blocks = nil
	}
}

func (f *Filter) allocBlocks(maxLine, n int) {
	size := max(blockSize, 2*maxLine+2)
	if len(f.blocks) == n && len(f.blocks[0].buf) >= size {
		return
	}
	f.blocks = f.blocks[:0]
	for range n {
		f.blocks = append(f.blocks, &block{buf: make([]byte, size)})
	}
}

// flush flushes w if it has a Flush method.
func flush(w io.Writer) error {
	if fl, ok := w.(flusher); ok {
		return fl.Flush()
	}
	return nil
}

// span is a batch in flight: lines start to end of a block.
type span struct {
	b          *block
	start, end int
}

// loop is Run's loop: batches go through a window of the given depth (0:
// decided at once), each written and flushed when it comes back, oldest
// first, and before another batch is sent if it is back already (at depth
// 0, always: a kill then costs at most the batch being decided). A block
// goes back to the reader when its last batch is written.
func (f *Filter) loop(ctx context.Context, w io.Writer, rd *reader, depth int) error {
	win := inflight.NewWindow[span](ctx, f.State, depth, f.DryRun)
	defer win.Close()
	recv := func() error {
		sp, err := win.Recv()
		if err != nil {
			// Nothing of this batch is written: nothing was decided.
			return fmt.Errorf("%w (after %d URLs decided and written)", err, f.Stats.New+f.Stats.Dup)
		}
		for i, line := range sp.b.lines[sp.start:sp.end] {
			seen := sp.b.seen[sp.start+i]
			if seen {
				f.Stats.Dup++
			} else {
				f.Stats.New++
			}
			if err := f.write(w, line, seen); err != nil {
				return err
			}
		}
		if err := flush(w); err != nil { // before another batch is sent
			return err
		}
		if b := sp.b; sp.end == len(b.sigs) && !b.last && b.err == nil {
			rd.free <- b
		}
		return nil
	}
	for {
		b, err := rd.next(ctx)
		if b == nil {
			f.dropBlocksIf(err)
			return err
		}
		// Once its last batch is written, b goes back to the reader: read
		// what is needed of it first.
		drained, final, err, nsigs := b.drained, b.last || b.err != nil, b.err, len(b.sigs)
		if cap(b.seen) < nsigs {
			b.seen = make([]bool, nsigs)
		}
		b.seen = b.seen[:nsigs]
		for start := 0; start < nsigs; start += BatchSize {
			if win.Full() {
				if err := recv(); err != nil {
					return err
				}
			}
			end := min(start+BatchSize, nsigs)
			win.Send(b.sigs[start:end], b.seen[start:end], span{b, start, end})
			for win.Ready() {
				if err := recv(); err != nil {
					return err
				}
			}
		}
		if drained || final {
			for win.Len() > 0 {
				if err := recv(); err != nil { // each flushed
					return err
				}
			}
		}
		if final {
			f.Stats.add(b.stats) // the last block is never handed back
			return err
		}
		if nsigs == 0 {
			rd.free <- b
		}
	}
}

var (
	prefixNew = []byte("new\t")
	prefixDup = []byte("dup\t")
	newline   = []byte("\n")
)

func (f *Filter) write(w io.Writer, line []byte, seen bool) error {
	switch {
	case f.Output == Mark:
		p := prefixNew
		if seen {
			p = prefixDup
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
	case (f.Output == Dups) != seen:
		return nil
	}
	if _, err := w.Write(line); err != nil {
		return err
	}
	_, err := w.Write(newline)
	return err
}
