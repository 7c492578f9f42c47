package linefilter

import (
	"bytes"
	"context"
	"fmt"
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

const (
	batchSize = 1024
	blockSize = 1 << 20
)

// Stats counts what a Filter has read.
type Stats struct {
	Lines   uint64 // lines read, of every kind
	New     uint64
	Dup     uint64
	Empty   uint64 // blank lines, skipped
	TooLong uint64 // lines over MaxLine, skipped
	Invalid uint64 // lines that are not URLs; signed raw and decided
}

// Filter decides URL lines against a Set and writes the chosen ones.
// A Filter is not safe for concurrent use; several Filters may share a Set.
type Filter struct {
	Set    *bitcheck.Set
	Signer *signature.Signer
	Output Output
	// DryRun tests without setting any bit.
	DryRun bool
	// MaxLine is the longest accepted line, without its newline; zero
	// means DefaultMaxLine.
	MaxLine int
	// Warn, when set, is told about every skipped line, with where it was.
	Warn func(name string, line uint64, msg string)

	Stats Stats

	buf   []byte
	lines [batchSize][]byte
	sigs  [batchSize]signature.Signature
	seen  [batchSize]bool
	n     int
}

type flusher interface{ Flush() error }

// Run reads r to its end (or until ctx is done), writing the chosen lines
// to w. name is used in warnings ("-" for standard input). When w has a
// Flush method, Run calls it whenever r has no more data for the moment.
func (f *Filter) Run(ctx context.Context, w io.Writer, r io.Reader, name string) error {
	max := f.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	if len(f.buf) < 2*max+2 {
		f.buf = make([]byte, maxInt(blockSize, 2*max+2))
	}
	var (
		filled   int
		skipping bool   // inside an over-long line
		lineNo   uint64 // of the last complete line
		eof      bool
	)
	for !eof {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(f.buf[filled:])
		filled += n
		switch {
		case err == io.EOF:
			eof = true
		case err != nil:
			return fmt.Errorf("read %s: %w", name, err)
		}
		// A short read means the input (a pipe, a terminal) has nothing
		// more for now: what was decided goes out, so that a filter in a
		// pipeline answers as lines arrive.
		drained := filled < len(f.buf)
		data := f.buf[:filled]
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			lineNo++
			if skipping {
				skipping = false
			} else if err := f.add(w, data[:i], name, lineNo, max); err != nil {
				return err
			}
			data = data[i+1:]
		}
		if eof && len(data) > 0 && !skipping { // last line without newline
			lineNo++
			if err := f.add(w, data, name, lineNo, max); err != nil {
				return err
			}
			data = nil
		}
		if err := f.flush(w); err != nil { // lines alias f.buf
			return err
		}
		if fl, ok := w.(flusher); ok && drained {
			if err := fl.Flush(); err != nil {
				return err
			}
		}
		if len(data) > max && !skipping {
			f.skip(name, lineNo+1, fmt.Sprintf("line longer than %d bytes, skipped", max))
			skipping = true
		}
		if skipping {
			data = nil
		}
		filled = copy(f.buf, data)
	}
	return nil
}

func (f *Filter) skip(name string, line uint64, msg string) {
	f.Stats.Lines++
	f.Stats.TooLong++
	if f.Warn != nil {
		f.Warn(name, line, msg)
	}
}

// add queues one line, without its newline.
func (f *Filter) add(w io.Writer, line []byte, name string, no uint64, max int) error {
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if len(line) > max {
		f.skip(name, no, fmt.Sprintf("line longer than %d bytes, skipped", max))
		return nil
	}
	f.Stats.Lines++
	if isBlank(line) {
		f.Stats.Empty++
		return nil
	}
	sig, ok := f.Signer.Sign(line)
	if !ok {
		f.Stats.Invalid++
	}
	f.lines[f.n], f.sigs[f.n] = line, sig
	f.n++
	if f.n == batchSize {
		return f.flush(w)
	}
	return nil
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

var (
	prefixNew = []byte("new\t")
	prefixDup = []byte("dup\t")
	newline   = []byte("\n")
)

// flush decides the queued lines and writes the chosen ones.
func (f *Filter) flush(w io.Writer) error {
	if f.n == 0 {
		return nil
	}
	sigs, seen := f.sigs[:f.n], f.seen[:f.n]
	if f.DryRun {
		f.Set.TestBatch(sigs, seen)
	} else {
		f.Set.TestAndSetBatch(sigs, seen)
	}
	for i, line := range f.lines[:f.n] {
		if seen[i] {
			f.Stats.Dup++
		} else {
			f.Stats.New++
		}
		if err := f.write(w, line, seen[i]); err != nil {
			return err
		}
	}
	f.n = 0
	return nil
}

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

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}
