package source

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// stream is the (uncompressed) bytes of one capture file, with the offset
// of the next byte. Records that fit in the bufio.Reader's buffer are
// returned where they lie in it; larger ones are copied into one reused
// buffer, which grows only to the largest record a reader accepts.
type stream struct {
	br  *bufio.Reader
	off int64  // offset of the next byte
	big []byte // for records larger than br's buffer
}

// take returns the next n bytes, valid until the next call on s. When the
// input ends first it returns what there was and the read error.
func (s *stream) take(n int) ([]byte, error) {
	if n <= s.br.Size() {
		b, err := s.br.Peek(n)
		d, _ := s.br.Discard(len(b)) // buffered: never fails, never reads
		s.off += int64(d)
		return b, err
	}
	return s.copy(n)
}

// copy reads the next n bytes into s's own buffer: unlike take's result,
// they stay valid across later calls to take and skip, until the next copy.
func (s *stream) copy(n int) ([]byte, error) {
	if cap(s.big) < n {
		s.big = make([]byte, n)
	}
	m, err := io.ReadFull(s.br, s.big[:n])
	s.off += int64(m)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return s.big[:m], err
}

// skip discards the next n bytes as they are read, holding none of them.
func (s *stream) skip(n int64) error {
	for n > 0 {
		d, err := s.br.Discard(int(min(n, 1<<30)))
		s.off += int64(d)
		n -= int64(d)
		if err != nil {
			return err
		}
	}
	return nil
}

// fail turns a read error met inside a record or block into the package's
// errors: the end of the input is ErrTruncated, a damaged gzip stream
// ErrCorrupt; what says what was being read.
func (s *stream) fail(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the data ends at byte %d, inside %s", ErrTruncated, s.off, what)
	}
	var bad flate.CorruptInputError
	if errors.As(err, &bad) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) {
		return fmt.Errorf("%w: gzip: %v (at byte %d of the uncompressed data, inside %s)", ErrCorrupt, err, s.off, what)
	}
	return fmt.Errorf("reading %s at byte %d: %w", what, s.off, err)
}

// fileOrder reads a capture file's integers in its byte order.
type fileOrder struct{ be bool } // big-endian file

func (o fileOrder) u16(b []byte) uint16 {
	if o.be {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (o fileOrder) u32(b []byte) uint32 {
	if o.be {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (o fileOrder) u64(b []byte) uint64 {
	if o.be {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}
