package linefilter

import (
	"context"
	"io"

	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/signature"
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

// Stats counts what a Filter has read.
type Stats struct {
	Lines   uint64 // lines read, of every kind
	New     uint64
	Dup     uint64
	Empty   uint64 // blank lines, skipped
	TooLong uint64 // lines over MaxLine, skipped
	Invalid uint64 // lines that are not URLs; signed raw and decided
}

func (s *Stats) add(o Stats) {
	s.Lines += o.Lines
	s.New += o.New
	s.Dup += o.Dup
	s.Empty += o.Empty
	s.TooLong += o.TooLong
	s.Invalid += o.Invalid
}

// Filter decides URL lines against a Decider and writes the chosen ones.
//
// Run uses two goroutines: one reads, splits and signs blocks of input, the
// calling one decides and writes them in order. A Filter is not safe for
// concurrent use; several Filters may share a Set.
type Filter struct {
	Set    bitcheck.Decider
	Signer *signature.Signer
	Output Output
	// DryRun tests without setting any bit.
	DryRun bool
	// MaxLine is the longest accepted line, without its newline; zero
	// means DefaultMaxLine.
	MaxLine int
	// Warn, when set, is told about every skipped line, with where it was.
	// It is called from Run's reading goroutine.
	Warn func(name string, line uint64, msg string)

	// Stats accumulates over every Run.
	Stats Stats

	blocks []*block
	seen   [batchSize]bool
}

const (
	batchSize = 1024
	blockSize = 1 << 20
	nblocks   = 3 // one being read, one being decided, one spare
)

type flusher interface{ Flush() error }

// Run reads r to its end (or until ctx is done), writing the chosen lines
// to w. name is used in warnings ("-" for standard input). When w has a
// Flush method, Run calls it whenever r has no more data for the moment, so
// that a filter in a pipeline answers as lines arrive.
func (f *Filter) Run(ctx context.Context, w io.Writer, r io.Reader, name string) error {
	maxLine := f.MaxLine
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	f.allocBlocks(maxLine)
	rd := &reader{r: r, name: name, max: maxLine, signer: f.Signer, warn: f.Warn,
		free: make(chan *block, nblocks), full: make(chan *block, nblocks), stop: make(chan struct{})}
	for _, b := range f.blocks {
		rd.free <- b
	}
	go rd.run(ctx)
	defer close(rd.stop)
	for b := range rd.full {
		if err := f.decide(ctx, w, b); err != nil {
			return err
		}
		if b.err != nil || b.last {
			f.Stats.add(b.stats)
			return b.err
		}
		rd.free <- b
	}
	return nil
}

func (f *Filter) allocBlocks(maxLine int) {
	size := max(blockSize, 2*maxLine+2)
	if len(f.blocks) == nblocks && len(f.blocks[0].buf) >= size {
		return
	}
	f.blocks = f.blocks[:0]
	for range nblocks {
		f.blocks = append(f.blocks, &block{buf: make([]byte, size)})
	}
}

// decide tests and sets the block's signatures a batch at a time and
// writes the chosen lines.
func (f *Filter) decide(ctx context.Context, w io.Writer, b *block) error {
	for start := 0; start < len(b.sigs); start += batchSize {
		end := min(start+batchSize, len(b.sigs))
		sigs, seen := b.sigs[start:end], f.seen[:end-start]
		if err := f.Set.Decide(ctx, sigs, seen, f.DryRun); err != nil {
			return err // nothing of this batch is written: nothing was decided
		}
		for i, line := range b.lines[start:end] {
			if seen[i] {
				f.Stats.Dup++
			} else {
				f.Stats.New++
			}
			if err := f.write(w, line, seen[i]); err != nil {
				return err
			}
		}
	}
	if fl, ok := w.(flusher); ok && b.drained {
		return fl.Flush()
	}
	return nil
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
