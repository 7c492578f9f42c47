package capture

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// FileSource reads pcap and pcapng files, plain or gzip-compressed (told
// apart by their first bytes), one after the other.
type FileSource struct {
	paths []string
	next  int // index of the next file to open

	f      *os.File
	count  *countingReader
	cur    atomic.Int64 // bytes read of the current file
	name   string
	read   func() ([]byte, gopacket.CaptureInfo, error)
	link   func(ci *gopacket.CaptureInfo) layers.LinkType
	pkts   uint64 // packets read from the current file
	offset int64  // of the next pcap record (uncompressed); -1 for pcapng
	gz     bool

	done  atomic.Int64 // bytes of finished files
	total int64        // bytes of all files
}

// OpenFiles returns a source over the given files, read in order. It checks
// that every file can be opened and stats their sizes, for Progress.
func OpenFiles(paths ...string) (*FileSource, error) {
	s := &FileSource{paths: paths}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("capture: %w", err)
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
		data, ci, err := s.read()
		if err == io.EOF {
			s.closeFile()
			continue
		}
		if err != nil {
			return s.readError(err)
		}
		s.pkts++
		if s.offset >= 0 {
			s.offset += 16 + int64(ci.CaptureLength)
		}
		p.Data, p.Info, p.Link = data, ci, s.link(&ci)
		return nil
	}
}

func (s *FileSource) readError(err error) error {
	where := fmt.Sprintf("packet %d", s.pkts+1)
	if s.offset >= 0 && s.gz {
		where += fmt.Sprintf(" (record at byte %d of the uncompressed data)", s.offset)
	} else if s.offset >= 0 {
		where += fmt.Sprintf(" (record at byte %d)", s.offset)
	}
	kind := ErrCorrupt
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		kind = ErrTruncated
	}
	s.closeFile()
	return fmt.Errorf("capture: %s: %s: %w: %v", s.name, where, kind, err)
}

func (s *FileSource) open(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	s.f, s.name, s.pkts, s.offset, s.gz = f, path, 0, -1, false
	s.count = &countingReader{r: f, n: &s.cur}
	s.cur.Store(0)
	br := bufio.NewReaderSize(s.count, 1<<20)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return s.openError(fmt.Errorf("%w: gzip: %v", ErrFormat, err))
		}
		br = bufio.NewReaderSize(zr, 1<<20)
		r, s.gz = br, true
	}
	magic, _ := br.Peek(4)
	if len(magic) < 4 {
		return s.openError(fmt.Errorf("%w: %d bytes", ErrFormat, len(magic)))
	}
	switch m := uint32(magic[0])<<24 | uint32(magic[1])<<16 | uint32(magic[2])<<8 | uint32(magic[3]); m {
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
		pr, err := pcapgo.NewReader(r)
		if err != nil {
			return s.openError(fmt.Errorf("%w: pcap header: %v", ErrFormat, err))
		}
		lt := pr.LinkType()
		s.read = pr.ZeroCopyReadPacketData
		s.link = func(*gopacket.CaptureInfo) layers.LinkType { return lt }
		s.offset = 24
	case 0x0a0d0d0a:
		nr, err := pcapgo.NewNgReader(r, pcapgo.NgReaderOptions{})
		if err != nil {
			return s.openError(fmt.Errorf("%w: pcapng header: %v", ErrFormat, err))
		}
		s.read = nr.ZeroCopyReadPacketData
		s.link = func(ci *gopacket.CaptureInfo) layers.LinkType {
			if iface, err := nr.Interface(ci.InterfaceIndex); err == nil {
				return iface.LinkType
			}
			return nr.LinkType()
		}
	default:
		return s.openError(fmt.Errorf("%w: starts with % x", ErrFormat, magic))
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
	s.f, s.count, s.read = nil, nil, nil
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
