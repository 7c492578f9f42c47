package source

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// pcapng block types read; every other type is skipped by its length.
const (
	ngSectionHeader  = 0x0a0d0d0a
	ngInterface      = 1
	ngObsoletePacket = 2
	ngSimplePacket   = 3
	ngEnhancedPacket = 6
	ngByteOrderMagic = 0x1a2b3c4d
	ngOptEnd         = 0
	ngOptTsresol     = 9
	ngOptTsoffset    = 14
	ngBlockOverhead  = 12      // type, leading and trailing length
	ngMaxInterfaces  = 1 << 16 // per section
	ngMaxOptions     = 1 << 20 // bytes of options in a section, interface or packet block
)

// ngMinLength is the smallest valid total length of each block type.
func ngMinLength(typ uint32) uint32 {
	switch typ {
	case ngSectionHeader:
		return 28
	case ngInterface:
		return 20
	case ngSimplePacket:
		return 16
	case ngEnhancedPacket, ngObsoletePacket:
		return 32
	}
	return ngBlockOverhead
}

func ngBlockName(typ uint32) string {
	switch typ {
	case ngSectionHeader:
		return "section header block"
	case ngInterface:
		return "interface description block"
	case ngSimplePacket:
		return "simple packet block"
	case ngEnhancedPacket:
		return "enhanced packet block"
	case ngObsoletePacket:
		return "packet block"
	}
	return fmt.Sprintf("block of type %#x", typ)
}

// ngInterfaceInfo is what packets need of an interface description.
type ngInterfaceInfo struct {
	link    layers.LinkType
	snaplen uint32
	unit    uint64 // timestamp units per second
	scale   uint64 // nanoseconds per unit, when a unit is a whole number of them; else 0
	offset  int64  // if_tsoffset, seconds
}

// ngReader reads pcapng: sections in either byte order, one after another,
// interfaces with their link type, snap length and timestamp resolution,
// enhanced, simple and (obsolete) packet blocks. Every block's length is
// checked: a multiple of 4, at least the minimum for its type, the same at
// both ends. Packet data over maxRecord is skipped as it is read.
type ngReader struct {
	s *stream
	fileOrder
	ifaces    []ngInterfaceInfo
	last      time.Time // the last packet's time, for simple packet blocks
	maxRecord int
	counts    *fileCounts
	start     int64 // offset of the block being read
}

// newNgReader reads the first section header block.
func newNgReader(s *stream, maxRecord int, counts *fileCounts) (*ngReader, error) {
	r := &ngReader{s: s, maxRecord: maxRecord, counts: counts}
	h, err := s.take(8)
	if err != nil {
		return nil, fmt.Errorf("%w: pcapng section header: %d of 8 bytes", ErrFormat, len(h))
	}
	if err := r.section(h[4:8]); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *ngReader) where() string { return "block" }
func (r *ngReader) at() int64     { return r.start }

// next reads blocks until a packet, and puts it in p. It returns io.EOF at
// the end of the file.
func (r *ngReader) next(p *Packet) error {
	for {
		r.start = r.s.off
		h, err := r.s.take(8)
		if len(h) == 0 && err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return r.s.fail(err, "a block header")
		}
		typ := r.u32(h)
		if typ == ngSectionHeader {
			if err := r.section(h[4:8]); err != nil {
				return err
			}
			continue
		}
		length := r.u32(h[4:])
		if err := r.checkLength(typ, length); err != nil {
			return err
		}
		switch typ {
		case ngEnhancedPacket, ngObsoletePacket, ngSimplePacket:
			r.counts.records++
			ok, err := r.packet(typ, length, p)
			if err != nil || ok {
				return err
			}
		case ngInterface:
			if err := r.iface(length); err != nil {
				return err
			}
		default:
			if err := r.s.skip(int64(length) - ngBlockOverhead); err != nil {
				return r.s.fail(err, fmt.Sprintf("a %d-byte %s", length, ngBlockName(typ)))
			}
			if err := r.trailer(typ, length); err != nil {
				return err
			}
		}
	}
}

func (r *ngReader) checkLength(typ, length uint32) error {
	if length%4 != 0 {
		return fmt.Errorf("%w: %s: block length %d is not a multiple of 4", ErrCorrupt, ngBlockName(typ), length)
	}
	if min := ngMinLength(typ); length < min {
		return fmt.Errorf("%w: %s: block length %d is less than its minimum, %d", ErrCorrupt, ngBlockName(typ), length, min)
	}
	return nil
}

// checkOptions refuses a block whose length leaves more than ngMaxOptions
// bytes for options: its length is wrong, and reading on to the end of the
// file to find out would call it truncated.
func checkOptions(typ, length uint32, n int64) error {
	if n > ngMaxOptions {
		return fmt.Errorf("%w: %s: block length %d leaves %d bytes for options, more than the %d read", ErrCorrupt, ngBlockName(typ), length, n, ngMaxOptions)
	}
	return nil
}

// trailer reads a block's trailing length, which must equal the leading one.
func (r *ngReader) trailer(typ, length uint32) error {
	b, err := r.s.take(4)
	if err != nil {
		return r.s.fail(err, fmt.Sprintf("the trailing length of a %s", ngBlockName(typ)))
	}
	if end := r.u32(b); end != length {
		return fmt.Errorf("%w: %s: block length %d at its start but %d at its end", ErrCorrupt, ngBlockName(typ), length, end)
	}
	return nil
}

// section reads a section header block after its type; rawLen is its
// length field, in the byte order the block itself declares.
func (r *ngReader) section(rawLen []byte) error {
	lenBytes := [4]byte(rawLen) // rawLen is in the stream's buffer, which the next take may move
	b, err := r.s.take(4)
	if err != nil {
		return r.s.fail(err, "a section header block")
	}
	switch {
	case binary.LittleEndian.Uint32(b) == ngByteOrderMagic:
		r.be = false
	case binary.BigEndian.Uint32(b) == ngByteOrderMagic:
		r.be = true
	default:
		return fmt.Errorf("%w: section header block: byte-order magic % x", ErrCorrupt, b)
	}
	length := r.u32(lenBytes[:])
	if err := r.checkLength(ngSectionHeader, length); err != nil {
		return err
	}
	if err := checkOptions(ngSectionHeader, length, int64(length)-28); err != nil {
		return err
	}
	b, err = r.s.take(12) // version and section length
	if err != nil {
		return r.s.fail(err, "a section header block")
	}
	if major := r.u16(b); major != 1 {
		return fmt.Errorf("%w: pcapng version %d.%d (only 1.x is read)", ErrFormat, major, r.u16(b[2:]))
	}
	if err := r.s.skip(int64(length) - 28); err != nil { // options
		return r.s.fail(err, fmt.Sprintf("a %d-byte section header block", length))
	}
	if err := r.trailer(ngSectionHeader, length); err != nil {
		return err
	}
	r.ifaces = r.ifaces[:0]
	return nil
}

// iface reads an interface description block after its length.
func (r *ngReader) iface(length uint32) error {
	what := "an interface description block"
	if len(r.ifaces) == ngMaxInterfaces {
		return fmt.Errorf("%w: more than %d interfaces in one section", ErrCorrupt, ngMaxInterfaces)
	}
	if err := checkOptions(ngInterface, length, int64(length)-20); err != nil {
		return err
	}
	b, err := r.s.take(8)
	if err != nil {
		return r.s.fail(err, what)
	}
	in := ngInterfaceInfo{link: layers.LinkType(r.u16(b)), snaplen: r.u32(b[4:]), unit: 1e6, scale: 1e3} // microseconds unless if_tsresol says
	rest := int64(length) - 20                                                                           // options
	for ended := false; rest > 0 && !ended; {
		if rest < 4 {
			return fmt.Errorf("%w: interface description block: %d bytes left for an option header", ErrCorrupt, rest)
		}
		b, err := r.s.take(4)
		if err != nil {
			return r.s.fail(err, what)
		}
		code, n := r.u16(b), int64(r.u16(b[2:]))
		padded := (n + 3) &^ 3
		if rest -= 4 + padded; rest < 0 {
			return fmt.Errorf("%w: interface description block: option %d of %d bytes runs past the block", ErrCorrupt, code, n)
		}
		switch {
		case code == ngOptEnd:
			ended = true
			err = r.s.skip(padded)
		case code == ngOptTsresol && n == 1:
			if b, err = r.s.take(4); err == nil {
				if err := in.setResolution(b[0]); err != nil {
					return err
				}
			}
		case code == ngOptTsoffset && n == 8:
			if b, err = r.s.take(8); err == nil {
				in.offset = int64(r.u64(b))
			}
		default:
			err = r.s.skip(padded)
		}
		if err != nil {
			return r.s.fail(err, what)
		}
	}
	if err := r.s.skip(rest); err != nil {
		return r.s.fail(err, what)
	}
	if err := r.trailer(ngInterface, length); err != nil {
		return err
	}
	r.ifaces = append(r.ifaces, in)
	return nil
}

// setResolution takes if_tsresol: 10^-v seconds, or 2^-v with the top bit.
func (in *ngInterfaceInfo) setResolution(v byte) error {
	e := v & 0x7f
	switch {
	case v&0x80 != 0 && e <= 63:
		in.unit = 1 << e
	case v&0x80 == 0 && e <= 19:
		in.unit = 1
		for range e {
			in.unit *= 10
		}
	default:
		return fmt.Errorf("%w: interface description block: timestamp resolution %#x out of range", ErrCorrupt, v)
	}
	in.scale = 0
	if in.unit <= 1e9 && 1e9%in.unit == 0 {
		in.scale = 1e9 / in.unit
	}
	return nil
}

func (in *ngInterfaceInfo) time(ts uint64) time.Time {
	sec, frac := ts/in.unit, ts%in.unit
	var nsec uint64
	if in.scale != 0 {
		nsec = frac * in.scale
	} else {
		hi, lo := bits.Mul64(frac, 1e9)
		nsec, _ = bits.Div64(hi, lo, in.unit) // frac < unit: no overflow
	}
	return time.Unix(int64(sec)+in.offset, int64(nsec)).UTC()
}

// packet reads a packet block after its length. It reports false when the
// packet was over maxRecord and skipped.
func (r *ngReader) packet(typ, length uint32, p *Packet) (bool, error) {
	name := ngBlockName(typ)
	fixed := 20 // EPB: interface, timestamp (2), captured and original length
	if typ == ngSimplePacket {
		fixed = 4 // original length
	}
	room := int64(length) - ngBlockOverhead - int64(fixed) // for the data, padding and options
	// Small blocks are taken whole, where they lie in the read buffer;
	// larger ones field by field, with the data copied.
	whole := int(length)-8 <= r.s.br.Size()
	var b []byte
	var err error
	if whole {
		b, err = r.s.take(int(length) - 8)
	} else {
		b, err = r.s.take(fixed)
	}
	if err != nil {
		return false, r.s.fail(err, fmt.Sprintf("a %d-byte %s", length, name))
	}
	var (
		ifIndex         uint32
		ts              uint64
		caplen, origlen uint32
	)
	switch typ {
	case ngEnhancedPacket:
		ifIndex, ts = r.u32(b), uint64(r.u32(b[4:]))<<32|uint64(r.u32(b[8:]))
		caplen, origlen = r.u32(b[12:]), r.u32(b[16:])
	case ngObsoletePacket:
		ifIndex, ts = uint32(r.u16(b)), uint64(r.u32(b[4:]))<<32|uint64(r.u32(b[8:]))
		caplen, origlen = r.u32(b[12:]), r.u32(b[16:])
	case ngSimplePacket:
		origlen = r.u32(b)
		caplen = uint32(min(int64(origlen), room))
		if len(r.ifaces) > 0 && r.ifaces[0].snaplen > 0 {
			caplen = min(caplen, r.ifaces[0].snaplen)
		}
	}
	if int(ifIndex) >= len(r.ifaces) {
		return false, fmt.Errorf("%w: %s for interface %d, but the section has %d", ErrCorrupt, name, ifIndex, len(r.ifaces))
	}
	padded := (int64(caplen) + 3) &^ 3
	if padded > room {
		return false, fmt.Errorf("%w: %s: captured length %d does not fit in block length %d", ErrCorrupt, name, caplen, length)
	}
	if err := checkOptions(typ, length, room-padded); err != nil {
		return false, err
	}
	in := &r.ifaces[ifIndex]
	oversize := int64(caplen) > int64(r.maxRecord)
	if whole {
		if end := r.u32(b[len(b)-4:]); end != length {
			return false, fmt.Errorf("%w: %s: block length %d at its start but %d at its end", ErrCorrupt, name, length, end)
		}
		if oversize {
			r.counts.oversize++
			return false, nil
		}
		b = b[fixed : fixed+int(caplen)]
	} else {
		if oversize {
			if err := r.s.skip(room); err != nil {
				return false, r.s.fail(err, fmt.Sprintf("a %d-byte %s (over the maximum, being skipped)", length, name))
			}
			if err := r.trailer(typ, length); err != nil {
				return false, err
			}
			r.counts.oversize++
			return false, nil
		}
		if b, err = r.s.copy(int(caplen)); err != nil {
			return false, r.s.fail(err, fmt.Sprintf("a %d-byte %s", length, name))
		}
		if err := r.s.skip(room - int64(caplen)); err != nil {
			return false, r.s.fail(err, fmt.Sprintf("a %d-byte %s", length, name))
		}
		if err := r.trailer(typ, length); err != nil {
			return false, err
		}
	}
	if typ != ngSimplePacket {
		r.last = in.time(ts)
	}
	origlen = r.counts.clampOriginal(caplen, origlen)
	p.Data, p.Link = b, in.link
	p.Info.Timestamp, p.Info.CaptureLength, p.Info.Length, p.Info.InterfaceIndex = r.last, int(caplen), int(origlen), int(ifIndex)
	return true, nil
}
