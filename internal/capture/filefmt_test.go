package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Capture files written byte by byte, in any byte order and resolution,
// for the reader tests: the writers here follow the formats' specifications
// (libpcap's pcap-savefile(5), IETF draft-ietf-opsawg-pcapng), not this
// package's readers.

// rec is one packet record to write.
type rec struct {
	ts    time.Time
	data  []byte
	orig  int
	link  layers.LinkType
	iface int // pcapng interface index
}

// loadRecords reads a classic pcap with gopacket's reader, as reference.
func loadRecords(t *testing.T, path string) []rec {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var recs []rec
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		recs = append(recs, rec{ts: ci.Timestamp, data: data, orig: ci.Length, link: r.LinkType()})
	}
	return recs
}

// pcapFile is a classic pcap file: order and resolution chosen, the
// snap length claimed in the header given.
func pcapFile(o byteOrder, nano bool, link layers.LinkType, snaplen uint32, recs []rec) []byte {
	var b []byte
	magic := uint32(0xa1b2c3d4)
	if nano {
		magic = 0xa1b23c4d
	}
	b = o.AppendUint32(b, magic)
	b = o.AppendUint16(b, 2)
	b = o.AppendUint16(b, 4)
	b = o.AppendUint32(b, 0)
	b = o.AppendUint32(b, 0)
	b = o.AppendUint32(b, snaplen)
	b = o.AppendUint32(b, uint32(link))
	for _, r := range recs {
		frac := r.ts.Nanosecond() / 1000
		if nano {
			frac = r.ts.Nanosecond()
		}
		b = o.AppendUint32(b, uint32(r.ts.Unix()))
		b = o.AppendUint32(b, uint32(frac))
		b = o.AppendUint32(b, uint32(len(r.data)))
		b = o.AppendUint32(b, uint32(r.orig))
		b = append(b, r.data...)
	}
	return b
}

// ngBlock is one pcapng block: body padded to 4 bytes, both lengths.
func ngBlock(o byteOrder, typ uint32, body []byte) []byte {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	n := uint32(12 + len(body))
	b := o.AppendUint32(nil, typ)
	b = o.AppendUint32(b, n)
	b = append(b, body...)
	return o.AppendUint32(b, n)
}

func ngSHB(o byteOrder) []byte {
	body := o.AppendUint32(nil, ngByteOrderMagic)
	body = o.AppendUint16(body, 1)
	body = o.AppendUint16(body, 0)
	body = o.AppendUint64(body, ^uint64(0)) // section length unknown
	body = ngOption(o, body, 4, []byte("urldedupd test"))
	body = ngOption(o, body, 0, nil)
	return ngBlock(o, ngSectionHeader, body)
}

func ngOption(o byteOrder, b []byte, code uint16, v []byte) []byte {
	b = o.AppendUint16(b, code)
	b = o.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// ngIDB is an interface; tsresol 0 leaves the option out (microseconds).
func ngIDB(o byteOrder, link layers.LinkType, snaplen uint32, tsresol byte) []byte {
	body := o.AppendUint16(nil, uint16(link))
	body = o.AppendUint16(body, 0)
	body = o.AppendUint32(body, snaplen)
	body = ngOption(o, body, 2, []byte("eth0"))
	if tsresol != 0 {
		body = ngOption(o, body, ngOptTsresol, []byte{tsresol})
	}
	body = ngOption(o, body, 0, nil)
	return ngBlock(o, ngInterface, body)
}

// ngUnits is t in units of the resolution tsresol (as if_tsresol).
func ngUnits(t time.Time, tsresol byte) uint64 {
	ns := uint64(t.UnixNano())
	switch {
	case tsresol == 0:
		return ns / 1000
	case tsresol&0x80 != 0:
		e := tsresol & 0x7f
		sec := ns / 1e9
		return sec<<e | (ns%1e9)<<e/1e9
	}
	e := int(tsresol)
	if e <= 9 {
		for range 9 - e {
			ns /= 10
		}
		return ns
	}
	for range e - 9 {
		ns *= 10
	}
	return ns
}

func ngEPB(o byteOrder, iface int, units uint64, data []byte, orig int) []byte {
	body := o.AppendUint32(nil, uint32(iface))
	body = o.AppendUint32(body, uint32(units>>32))
	body = o.AppendUint32(body, uint32(units))
	body = o.AppendUint32(body, uint32(len(data)))
	body = o.AppendUint32(body, uint32(orig))
	body = append(body, data...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	body = ngOption(o, body, 1, []byte("a comment"))
	body = ngOption(o, body, 0, nil)
	return ngBlock(o, ngEnhancedPacket, body)
}

func ngPB(o byteOrder, iface int, units uint64, data []byte, orig int) []byte {
	body := o.AppendUint16(nil, uint16(iface))
	body = o.AppendUint16(body, 0) // drops
	body = o.AppendUint32(body, uint32(units>>32))
	body = o.AppendUint32(body, uint32(units))
	body = o.AppendUint32(body, uint32(len(data)))
	body = o.AppendUint32(body, uint32(orig))
	body = append(body, data...)
	return ngBlock(o, ngObsoletePacket, body)
}

func ngSPB(o byteOrder, data []byte, orig int) []byte {
	return ngBlock(o, ngSimplePacket, append(o.AppendUint32(nil, uint32(orig)), data...))
}

// Blocks a reader must skip: name resolution, interface statistics, a
// block type for local use.
func ngOtherBlocks(o byteOrder) []byte {
	nrb := o.AppendUint16(nil, 1) // IPv4 record
	nrb = o.AppendUint16(nrb, 13)
	nrb = append(nrb, 192, 0, 2, 1, 'h', 'o', 's', 't', '.', 't', 'e', 's', 0, 0, 0, 0)
	nrb = append(nrb, 0, 0, 0, 0) // end of records
	isb := o.AppendUint32(nil, 0)
	isb = o.AppendUint32(isb, 0)
	isb = o.AppendUint32(isb, 0)
	b := ngBlock(o, 4, nrb)
	b = append(b, ngBlock(o, 5, isb)...)
	return append(b, ngBlock(o, 0x80000001, []byte("local use"))...)
}

func gzipped(b []byte) []byte {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

// byteOrder is binary.LittleEndian or binary.BigEndian.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}
