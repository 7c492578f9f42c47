package linefilter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// A block is one read's worth of input with its lines split and signed.
// Blocks cycle between the reader (free → full) and the decider (full →
// free); lines alias buf, so a block is reused only after it was decided.
type block struct {
	buf     []byte
	lines   [][]byte
	sigs    []signature.Signature
	seen    []bool // answers, when decided through a window
	drained bool   // the input had nothing more for the moment
	last    bool   // end of input
	err     error  // the reader stopped on this error
	stats   Stats  // the reader's counts, on the last block
}

// reader is the goroutine that reads, splits and signs.
type reader struct {
	r      io.Reader
	name   string
	max    int
	signer *signature.Signer
	warn   func(string, uint64, string)

	free, full chan *block
	stop       chan struct{} // closed when the decider gives up

	stats    Stats
	lineNo   uint64 // of the last complete line
	skipping bool   // inside an over-long line
}

func (rd *reader) run(ctx context.Context) {
	defer close(rd.full)
	var carry []byte // a partial line, in the previous block
	for {
		var b *block
		select {
		case b = <-rd.free:
		case <-rd.stop:
			return
		}
		filled := copy(b.buf, carry)
		b.lines, b.sigs = b.lines[:0], b.sigs[:0]
		b.drained, b.last, b.err = false, false, nil
		if err := ctx.Err(); err != nil {
			rd.finish(b, err)
			return
		}
		n, err := rd.r.Read(b.buf[filled:])
		filled += n
		eof := err == io.EOF
		if err != nil && !eof {
			// An *os.File's error already says "read NAME: …".
			if pe := (*fs.PathError)(nil); !errors.As(err, &pe) {
				err = fmt.Errorf("read %s: %w", rd.name, err)
			}
			rd.finish(b, err)
			return
		}
		b.drained = filled < len(b.buf)
		carry = rd.split(b, b.buf[:filled], eof)
		if eof {
			rd.finish(b, nil)
			return
		}
		select {
		case rd.full <- b:
		case <-rd.stop:
			return
		}
	}
}

// next returns the next full block, or nil and the reason when there is
// none: the reader ended (nil error), or ctx is done while it waits for
// input.
func (rd *reader) next(ctx context.Context) (*block, error) {
	select {
	case b, ok := <-rd.full:
		if !ok {
			return nil, nil
		}
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (rd *reader) finish(b *block, err error) {
	b.last, b.err, b.stats = true, err, rd.stats
	select {
	case rd.full <- b:
	case <-rd.stop:
	}
}

// split queues the complete lines of data and returns the partial line at
// its end (nil at end of input or inside an over-long line).
func (rd *reader) split(b *block, data []byte, eof bool) []byte {
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		rd.lineNo++
		if rd.skipping {
			rd.skipping = false
		} else {
			rd.add(b, data[:i], rd.lineNo)
		}
		data = data[i+1:]
	}
	switch {
	case rd.skipping:
		return nil
	case eof && len(data) > 0: // last line without a newline
		rd.lineNo++
		rd.add(b, data, rd.lineNo)
		return nil
	case len(data) > rd.max || len(data) == len(b.buf):
		// A partial line that fills the block can never complete in it:
		// skip it rather than read nothing forever.
		rd.skip(rd.lineNo + 1)
		rd.skipping = true
		return nil
	}
	return data
}

func (rd *reader) add(b *block, line []byte, no uint64) {
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if len(line) > rd.max {
		rd.skip(no)
		return
	}
	rd.stats.Lines++
	if signature.Blank(line) {
		rd.stats.Empty++
		return
	}
	sig, ok := rd.signer.Sign(line)
	if !ok {
		rd.stats.Invalid++
	}
	b.lines = append(b.lines, line)
	b.sigs = append(b.sigs, sig)
}

func (rd *reader) skip(line uint64) {
	rd.stats.Lines++
	rd.stats.TooLong++
	if rd.warn != nil {
		rd.warn(rd.name, line, fmt.Sprintf("line longer than %d bytes, skipped", rd.max))
	}
}
