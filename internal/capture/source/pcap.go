package source

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// pcapReader reads the records of a classic pcap file (libpcap 2.x): any of
// the four magics, micro- or nanosecond timestamps in either byte order.
// The snap length in the file header is not trusted: a record is taken up
// to maxRecord bytes, whatever the header says, and a longer one skipped.
// A record captured longer than its original length is taken whole (see
// fileCounts.clampOriginal).
type pcapReader struct {
	s *stream
	fileOrder
	nanoScale int64 // 1 for nanosecond files, 1000 for microsecond ones
	link      layers.LinkType
	maxRecord int
	counts    *fileCounts
	start     int64 // offset of the record being read
}

const pcapFileHeaderLen, pcapRecordHeaderLen = 24, 16

// newPcapReader reads the file header.
func newPcapReader(s *stream, maxRecord int, counts *fileCounts) (*pcapReader, error) {
	h, err := s.take(pcapFileHeaderLen)
	if err != nil {
		return nil, fmt.Errorf("%w: pcap file header: %d of 24 bytes", ErrFormat, len(h))
	}
	r := &pcapReader{s: s, nanoScale: 1000, maxRecord: maxRecord, counts: counts}
	switch binary.LittleEndian.Uint32(h) {
	case 0xa1b2c3d4:
	case 0xa1b23c4d:
		r.nanoScale = 1
	case 0xd4c3b2a1:
		r.be = true
	case 0x4d3cb2a1:
		r.be, r.nanoScale = true, 1
	}
	if major := r.u16(h[4:]); major != 2 {
		return nil, fmt.Errorf("%w: pcap version %d.%d (only 2.x is read)", ErrFormat, major, r.u16(h[6:]))
	}
	// The link-type field carries FCS flags in its upper bits (libpcap's
	// LT_LINKTYPE); the snap length at 16 is ignored.
	r.link = layers.LinkType(r.u32(h[20:]) & 0xffff)
	r.start = s.off
	return r, nil
}

// next reads the next record into p, skipping (and counting) those over
// maxRecord. It returns io.EOF at the end of the file.
func (r *pcapReader) next(p *Packet) error {
	for {
		r.start = r.s.off
		h, err := r.s.take(pcapRecordHeaderLen)
		if len(h) == 0 && err == io.EOF {
			return io.EOF
		}
		r.counts.records++
		if err != nil {
			return r.s.fail(err, "a record header")
		}
		sec, frac := r.u32(h[0:]), r.u32(h[4:])
		caplen, origlen := r.u32(h[8:]), r.u32(h[12:])
		if int64(caplen) > int64(r.maxRecord) {
			if err := r.s.skip(int64(caplen)); err != nil {
				return r.s.fail(err, fmt.Sprintf("a %d-byte record (over the maximum, being skipped)", caplen))
			}
			r.counts.oversize++
			continue
		}
		origlen = r.counts.clampOriginal(caplen, origlen)
		data, err := r.s.take(int(caplen))
		if err != nil {
			return r.s.fail(err, fmt.Sprintf("a %d-byte record", caplen))
		}
		p.Data, p.Link = data, r.link
		p.Info.Timestamp = time.Unix(int64(sec), int64(frac)*r.nanoScale).UTC()
		p.Info.CaptureLength, p.Info.Length, p.Info.InterfaceIndex = int(caplen), int(origlen), 0
		return nil
	}
}

func (r *pcapReader) where() string { return "record" }
func (r *pcapReader) at() int64     { return r.start }
