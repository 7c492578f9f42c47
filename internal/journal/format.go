package journal

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/urldedupd/urldedupd/internal/signature"
)

const (
	// HeaderSize is the size of a journal file's header: magic, the
	// state's id, and a CRC-32C of both.
	HeaderSize = 32
	// FrameHeaderSize is the size of a frame before its signatures.
	FrameHeaderSize = 16
	// MaxFrameSigs bounds a frame: 2^17 signatures, 1 MiB. A reader never
	// holds more than one frame.
	MaxFrameSigs = 1 << 17
)

var (
	magic  = [8]byte{'U', 'D', 'J', 'R', 'N', 'L', '0', '1'}
	castag = crc32.MakeTable(crc32.Castagnoli)
)

// header returns the header of a journal of state id.
func header(id uint64) []byte {
	b := make([]byte, HeaderSize)
	copy(b, magic[:])
	binary.LittleEndian.PutUint64(b[8:], id)
	binary.LittleEndian.PutUint32(b[16:], crc32.Checksum(b[:16], castag))
	return b
}

// checkHeader checks a journal header against state id.
func checkHeader(b []byte, id uint64) error {
	if len(b) < HeaderSize {
		return fmt.Errorf("%w: header of %d bytes, not %d", ErrCorrupt, len(b), HeaderSize)
	}
	if !bytes.Equal(b[:8], magic[:]) {
		return fmt.Errorf("%w: no journal magic at offset 0 (%q)", ErrCorrupt, b[:8])
	}
	if got, want := binary.LittleEndian.Uint32(b[16:]), crc32.Checksum(b[:16], castag); got != want {
		return fmt.Errorf("%w: header checksum %08x, computed %08x", ErrCorrupt, got, want)
	}
	if got := binary.LittleEndian.Uint64(b[8:]); got != id {
		return fmt.Errorf("%w: its header names state %016x, this one is %016x", ErrOtherState, got, id)
	}
	return nil
}

// frameCRC is the checksum of a frame's epoch and signatures (b is the
// frame from its epoch on).
func frameCRC(b []byte) uint32 { return crc32.Checksum(b, castag) }

// Tail describes how a scanned journal ended.
type Tail struct {
	Frames int   // whole frames read
	Sigs   int   // signatures in them
	End    int64 // offset after the last whole frame
	// Torn is the size of what followed the last whole frame: a frame a
	// crash cut short, or zeros a file system left. 0 for a clean end.
	Torn int64
}

// Scan reads the journal in r, of state id, calling fn with each frame's
// epoch and signatures in order (sigs is reused: fn must copy what it
// keeps). It returns how the journal ended; a torn tail is not an error.
// Bytes that are not frames before the end are an error wrapping
// ErrCorrupt that says at which offset; an error from fn is returned as it
// is. It holds at most one frame in memory.
func Scan(r io.Reader, id uint64, fn func(epoch uint64, sigs []signature.Signature) error) (Tail, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var t Tail
	hdr := make([]byte, HeaderSize)
	if n, err := io.ReadFull(br, hdr); err != nil {
		if n == 0 && err == io.EOF {
			return t, nil // created, never written: nothing to replay
		}
		return t, fmt.Errorf("%w: header: %d bytes, then %v", ErrCorrupt, n, err)
	}
	if err := checkHeader(hdr, id); err != nil {
		return t, err
	}
	t.End = HeaderSize
	var fh [FrameHeaderSize]byte
	body := make([]byte, 0, 8+8*64)
	sigs := make([]signature.Signature, 0, 64)
	for {
		n, err := io.ReadFull(br, fh[:])
		if n == 0 && err == io.EOF {
			return t, nil
		}
		if err != nil { // a frame header cut short: torn
			t.Torn = int64(n)
			return t, nil
		}
		count := binary.LittleEndian.Uint32(fh[0:])
		sum := binary.LittleEndian.Uint32(fh[4:])
		if count == 0 && sum == 0 && binary.LittleEndian.Uint64(fh[8:]) == 0 {
			rest, err := zeros(br)
			if err != nil {
				return t, err
			}
			if rest < 0 {
				return t, fmt.Errorf("%w: at offset %d: zeros, then bytes that are not", ErrCorrupt, t.End)
			}
			t.Torn = FrameHeaderSize + rest
			return t, nil
		}
		if count == 0 || count > MaxFrameSigs {
			rest, _ := io.Copy(io.Discard, br)
			if rest == 0 { // the last 16 bytes: a header torn into garbage
				t.Torn = FrameHeaderSize
				return t, nil
			}
			return t, fmt.Errorf("%w: at offset %d: a frame of %d signatures (1 to %d)", ErrCorrupt, t.End, count, MaxFrameSigs)
		}
		size := 8 + 8*int(count)
		if cap(body) < size {
			body = make([]byte, size)
		}
		body = body[:size]
		copy(body, fh[8:])
		m, err := io.ReadFull(br, body[8:])
		if err != nil { // the frame runs past the end: torn
			t.Torn = FrameHeaderSize + int64(m)
			return t, nil
		}
		if got := frameCRC(body); got != sum {
			rest, err := io.Copy(io.Discard, br)
			if err == nil && rest == 0 { // the last frame, written in part
				t.Torn = FrameHeaderSize + int64(size-8)
				return t, nil
			}
			return t, fmt.Errorf("%w: at offset %d: frame checksum %08x, computed %08x, and %d bytes follow", ErrCorrupt, t.End, sum, got, rest)
		}
		sigs = sigs[:0]
		for i := 0; i < int(count); i++ {
			sigs = append(sigs, signature.Signature(binary.LittleEndian.Uint64(body[8+8*i:])))
		}
		if err := fn(binary.LittleEndian.Uint64(body), sigs); err != nil {
			return t, err
		}
		t.Frames++
		t.Sigs += int(count)
		t.End += int64(FrameHeaderSize + size - 8)
	}
}

// zeros reads r to its end and returns how many bytes it read, all zero,
// or -1 at the first that is not.
func zeros(r io.Reader) (int64, error) {
	var buf [4096]byte
	var n int64
	for {
		m, err := r.Read(buf[:])
		for _, c := range buf[:m] {
			if c != 0 {
				return -1, nil
			}
		}
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
