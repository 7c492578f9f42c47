package source

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// DefaultMaxRecord is the default FileOptions.MaxRecord: 1 MiB. libpcap
// and Wireshark write records of at most 256 KiB (MAXIMUM_SNAPLEN); a
// Linux GRO/BIG TCP super-packet is at most 512 KiB. docs/capture.md says
// why.
const DefaultMaxRecord = 1 << 20

// FileOptions configure a FileSource. A nil *FileOptions means the
// defaults.
type FileOptions struct {
	// MaxRecord is the largest packet record taken, in captured bytes,
	// whatever snap length the file declares. A larger record is
	// discarded as it is read (never held in memory) and counted in
	// SkippedRecords. Zero means DefaultMaxRecord.
	MaxRecord int
}

// FileSource reads pcap and pcapng files, plain or gzip-compressed (told
// apart by their first bytes), one after the other. Packet data aliases
// its buffers: valid until the next call to Next.
type FileSource struct {
	paths     []string
	next      int // index of the next file to open
	maxRecord int

	f      *os.File
	cur    atomic.Int64 // bytes read of the current file
	name   string
	in     stream
	gzBuf  *bufio.Reader // on the file (under the gzip reader, if any)
	zBuf   *bufio.Reader // on the gzip reader
	zr     *gzip.Reader
	read   recordReader
	counts fileCounts // of the current file
	gz     bool

	oversize uint64       // records skipped over MaxRecord, all files
	clamped  uint64       // records whose original length was raised, all files
	done     atomic.Int64 // bytes of finished files
	total    int64        // bytes of all files

	// OnFileEnd, when set, is called by Next when a file has been read to
	// its end, with its path, before the next one is opened: every frame
	// of it has been handed out.
	OnFileEnd func(path string)
}

// fileCounts are a reader's counts for one file.
type fileCounts struct {
	records  uint64 // packet records met, the one being read included
	oversize uint64 // records skipped over maxRecord
	clamped  uint64 // records taken with their original length raised
}

// clampOriginal returns the original length of a record to report: its
// own, or its captured length when that is larger, which some writers
// produce. Such a record is not corrupt: tshark and tcpdump read on past
// it, and tshark dissects all its captured bytes; so is it taken here,
// whole, with the original length raised (so that CaptureLength <= Length
// holds for the callers) and counted.
func (c *fileCounts) clampOriginal(caplen, origlen uint32) uint32 {
	if caplen > origlen {
		c.clamped++
		return caplen
	}
	return origlen
}

// recordReader reads the packets of one file's format.
type recordReader interface {
	next(p *Packet) error // io.EOF at the end
	where() string        // "record" or "block"
	at() int64            // offset of the record or block being read
}

// OpenFiles returns a source over the given files with the default
// options. See OpenFilesWith.
func OpenFiles(paths ...string) (*FileSource, error) {
	return OpenFilesWith(nil, paths...)
}

// Stdin, as a path, is standard input (read once: ErrStdinTwice when it is
// given twice); messages name it StdinName.
const (
	Stdin     = "-"
	StdinName = "standard input"
)

// OpenFilesWith returns a source over the given files, read in order. It
// checks that every file exists and is not a directory (ErrIsDirectory),
// and stats their sizes, for Progress.
func OpenFilesWith(opts *FileOptions, paths ...string) (*FileSource, error) {
	s := &FileSource{paths: paths, maxRecord: DefaultMaxRecord}
	if opts != nil && opts.MaxRecord > 0 {
		s.maxRecord = opts.MaxRecord
	}
	stdin := 0
	for _, p := range paths {
		if p == Stdin {
			if stdin++; stdin > 1 {
				return nil, fmt.Errorf("capture: %w", ErrStdinTwice)
			}
			continue // its size is not known: Progress counts what is read
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("capture: %w", err)
		}
		if fi.IsDir() {
			return nil, fmt.Errorf("capture: %s: %w", p, ErrIsDirectory)
		}
		s.total += fi.Size()
	}
	return s, nil
}

// Progress returns the bytes read so far and the total size of the files.
// It is safe to call while another goroutine reads.
func (s *FileSource) Progress() (done, total int64) {
	return s.done.Load() + s.cur.Load(), s.total
}

// SkippedRecords returns how many records were over MaxRecord and skipped,
// in all files so far.
func (s *FileSource) SkippedRecords() uint64 {
	return s.oversize + s.counts.oversize
}

// ClampedRecords returns how many records, in all files so far, had a
// captured length greater than their original length. They were read
// whole, as tshark reads them, with Info.Length raised to the captured
// length.
func (s *FileSource) ClampedRecords() uint64 {
	return s.clamped + s.counts.clamped
}

// MaxRecord returns the largest record taken, in bytes.
func (s *FileSource) MaxRecord() int { return s.maxRecord }

// Position returns the current file and the number of the last packet
// record read from it, for messages: "FILE: packet N".
func (s *FileSource) Position() string {
	return fmt.Sprintf("%s: packet %d", s.name, s.counts.records)
}

// Drops is always 0 for files.
func (s *FileSource) Drops() uint64 { return 0 }

// Next reads the next frame.
func (s *FileSource) Next(p *Packet) error {
	for {
		if s.read == nil {
			if s.next == len(s.paths) {
				return io.EOF
			}
			if err := s.open(s.paths[s.next]); err != nil {
				return err
			}
			s.next++
		}
		err := s.read.next(p)
		if err == nil {
			return nil
		}
		if err == io.EOF {
			if s.OnFileEnd != nil {
				s.OnFileEnd(s.name)
			}
			s.closeFile()
			continue
		}
		return s.readError(err)
	}
}

func (s *FileSource) readError(err error) error {
	where := fmt.Sprintf("packet %d (%s at byte %d", s.counts.records, s.read.where(), s.read.at())
	if s.gz {
		where += " of the uncompressed data"
	}
	s.closeFile()
	return fmt.Errorf("capture: %s: %s): %w", s.name, where, err)
}

func (s *FileSource) open(path string) error {
	f, name := os.Stdin, StdinName
	if path != Stdin {
		var err error
		if f, err = os.Open(path); err != nil {
			return fmt.Errorf("capture: %w", err)
		}
		name = path
	}
	var err error
	s.f, s.name, s.gz, s.counts = f, name, false, fileCounts{}
	s.cur.Store(0)
	counted := &countingReader{r: f, n: &s.cur}
	if s.gzBuf == nil {
		s.gzBuf = bufio.NewReaderSize(counted, 1<<20)
	} else {
		s.gzBuf.Reset(counted)
	}
	br := s.gzBuf
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		if s.zr == nil {
			s.zr, err = gzip.NewReader(br)
		} else {
			err = s.zr.Reset(br)
		}
		if err != nil {
			return s.openError(fmt.Errorf("%w: gzip: %v", ErrFormat, err))
		}
		if s.zBuf == nil {
			s.zBuf = bufio.NewReaderSize(s.zr, 1<<20)
		} else {
			s.zBuf.Reset(s.zr)
		}
		s.in.br, s.gz = s.zBuf, true
	} else {
		s.in.br = br
	}
	s.in.off = 0
	magic, _ := s.in.br.Peek(4)
	if len(magic) < 4 {
		return s.openError(fmt.Errorf("%w: %d bytes", ErrFormat, len(magic)))
	}
	switch m := binary.BigEndian.Uint32(magic); m {
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
		s.read, err = newPcapReader(&s.in, s.maxRecord, &s.counts)
	case ngSectionHeader:
		s.read, err = newNgReader(&s.in, s.maxRecord, &s.counts)
	default:
		err = fmt.Errorf("%w: starts with % x", ErrFormat, magic)
	}
	if err != nil {
		return s.openError(err)
	}
	return nil
}

func (s *FileSource) openError(err error) error {
	s.closeFile()
	return fmt.Errorf("capture: %s: %w", s.name, err)
}

func (s *FileSource) closeFile() {
	if s.f != nil {
		if fi, err := s.f.Stat(); err == nil {
			s.done.Add(fi.Size())
		}
		s.cur.Store(0)
		s.f.Close()
	}
	s.oversize += s.counts.oversize
	s.clamped += s.counts.clamped
	s.counts.oversize, s.counts.clamped = 0, 0
	s.f, s.read = nil, nil
}

// Close closes the current file.
func (s *FileSource) Close() error {
	s.closeFile()
	s.next = len(s.paths)
	return nil
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
