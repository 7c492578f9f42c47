// Package capfile writes capture files byte by byte, in any byte order and
// resolution, for the tests of the capture packages: the writers follow the
// formats' specifications (libpcap's pcap-savefile(5), IETF
// draft-ietf-opsawg-pcapng), not this module's readers.
package capfile

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

// pcapng block types and options (draft-ietf-opsawg-pcapng).
const (
	ngSectionHeader  = 0x0a0d0d0a
	ngInterface      = 1
	ngObsoletePacket = 2
	ngSimplePacket   = 3
	ngByteOrderMagic = 0x1a2b3c4d
	ngOptTsresol     = 9
)

// NgEnhancedPacket is the block type of an enhanced packet block.
const NgEnhancedPacket = 6

// Record is one packet record to write.
type Record struct {
	TS    time.Time
	Data  []byte
	Orig  int
	Link  layers.LinkType
	Iface int // pcapng interface index
}

// LoadRecords reads a classic pcap with gopacket's reader, as reference.
func LoadRecords(t testing.TB, path string) []Record {
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
	var recs []Record
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		recs = append(recs, Record{TS: ci.Timestamp, Data: data, Orig: ci.Length, Link: r.LinkType()})
	}
	return recs
}

// Pcap is a classic pcap file: order and resolution chosen, the
// snap length claimed in the header given.
func Pcap(o ByteOrder, nano bool, link layers.LinkType, snaplen uint32, recs []Record) []byte {
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
		frac := r.TS.Nanosecond() / 1000
		if nano {
			frac = r.TS.Nanosecond()
		}
		b = o.AppendUint32(b, uint32(r.TS.Unix()))
		b = o.AppendUint32(b, uint32(frac))
		b = o.AppendUint32(b, uint32(len(r.Data)))
		b = o.AppendUint32(b, uint32(r.Orig))
		b = append(b, r.Data...)
	}
	return b
}

// NgBlock is one pcapng block: body padded to 4 bytes, both lengths.
func NgBlock(o ByteOrder, typ uint32, body []byte) []byte {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	n := uint32(12 + len(body))
	b := o.AppendUint32(nil, typ)
	b = o.AppendUint32(b, n)
	b = append(b, body...)
	return o.AppendUint32(b, n)
}

// NgSHB is a section header block.
func NgSHB(o ByteOrder) []byte {
	body := o.AppendUint32(nil, ngByteOrderMagic)
	body = o.AppendUint16(body, 1)
	body = o.AppendUint16(body, 0)
	body = o.AppendUint64(body, ^uint64(0)) // section length unknown
	body = NgOption(o, body, 4, []byte("urldedupd test"))
	body = NgOption(o, body, 0, nil)
	return NgBlock(o, ngSectionHeader, body)
}

// NgOption appends an option to b, padded to 4 bytes.
func NgOption(o ByteOrder, b []byte, code uint16, v []byte) []byte {
	b = o.AppendUint16(b, code)
	b = o.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// NgIDB is an interface; tsresol 0 leaves the option out (microseconds).
func NgIDB(o ByteOrder, link layers.LinkType, snaplen uint32, tsresol byte) []byte {
	body := o.AppendUint16(nil, uint16(link))
	body = o.AppendUint16(body, 0)
	body = o.AppendUint32(body, snaplen)
	body = NgOption(o, body, 2, []byte("eth0"))
	if tsresol != 0 {
		body = NgOption(o, body, ngOptTsresol, []byte{tsresol})
	}
	body = NgOption(o, body, 0, nil)
	return NgBlock(o, ngInterface, body)
}

// NgUnits is t in units of the resolution tsresol (as if_tsresol).
func NgUnits(t time.Time, tsresol byte) uint64 {
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

// NgEPB is an enhanced packet block with a comment option.
func NgEPB(o ByteOrder, iface int, units uint64, data []byte, orig int) []byte {
	body := o.AppendUint32(nil, uint32(iface))
	body = o.AppendUint32(body, uint32(units>>32))
	body = o.AppendUint32(body, uint32(units))
	body = o.AppendUint32(body, uint32(len(data)))
	body = o.AppendUint32(body, uint32(orig))
	body = append(body, data...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	body = NgOption(o, body, 1, []byte("a comment"))
	body = NgOption(o, body, 0, nil)
	return NgBlock(o, NgEnhancedPacket, body)
}

// NgPB is an obsolete packet block.
func NgPB(o ByteOrder, iface int, units uint64, data []byte, orig int) []byte {
	body := o.AppendUint16(nil, uint16(iface))
	body = o.AppendUint16(body, 0) // drops
	body = o.AppendUint32(body, uint32(units>>32))
	body = o.AppendUint32(body, uint32(units))
	body = o.AppendUint32(body, uint32(len(data)))
	body = o.AppendUint32(body, uint32(orig))
	body = append(body, data...)
	return NgBlock(o, ngObsoletePacket, body)
}

// NgSPB is a simple packet block.
func NgSPB(o ByteOrder, data []byte, orig int) []byte {
	return NgBlock(o, ngSimplePacket, append(o.AppendUint32(nil, uint32(orig)), data...))
}

// NgOtherBlocks are blocks a reader must skip: name resolution, interface statistics, a
// block type for local use.
func NgOtherBlocks(o ByteOrder) []byte {
	nrb := o.AppendUint16(nil, 1) // IPv4 record
	nrb = o.AppendUint16(nrb, 13)
	nrb = append(nrb, 192, 0, 2, 1, 'h', 'o', 's', 't', '.', 't', 'e', 's', 0, 0, 0, 0)
	nrb = append(nrb, 0, 0, 0, 0) // end of records
	isb := o.AppendUint32(nil, 0)
	isb = o.AppendUint32(isb, 0)
	isb = o.AppendUint32(isb, 0)
	b := NgBlock(o, 4, nrb)
	b = append(b, NgBlock(o, 5, isb)...)
	return append(b, NgBlock(o, 0x80000001, []byte("local use"))...)
}

// Gzipped is b gzip-compressed.
func Gzipped(b []byte) []byte {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

// ByteOrder is binary.LittleEndian or binary.BigEndian.
type ByteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// File is a capture file made in memory, and how many copies of its
// records it holds.
type File struct {
	Name   string
	Data   []byte
	Copies int
}

// LongerThanOriginal loads the records of the capture at path (at least
// 10) and sets, in two of them, an original length below the captured one,
// as some writers do. It returns those records, the indexes changed, and
// them written as little-endian pcap, big-endian nanosecond pcap, and a
// pcapng of two sections (one of each byte order, enhanced and obsolete
// packet blocks alternating).
func LongerThanOriginal(t testing.TB, path string) (recs []Record, bad map[int]int, files []File) {
	t.Helper()
	recs = LoadRecords(t, path)
	if len(recs) < 10 {
		t.Fatalf("%s: %d records", path, len(recs))
	}
	bad = map[int]int{len(recs) / 3: len(recs[len(recs)/3].Data) - 1, len(recs) / 2: 0} // record: its original length
	for i, orig := range bad {
		recs[i].Orig = orig
	}
	link := recs[0].Link
	var ng []byte
	for _, o := range []ByteOrder{binary.LittleEndian, binary.BigEndian} {
		ng = append(ng, NgSHB(o)...)
		ng = append(ng, NgIDB(o, link, 0, 9)...)
		for i, r := range recs {
			if i%2 == 0 {
				ng = append(ng, NgEPB(o, 0, NgUnits(r.TS, 9), r.Data, r.Orig)...)
			} else {
				ng = append(ng, NgPB(o, 0, NgUnits(r.TS, 9), r.Data, r.Orig)...)
			}
		}
	}
	return recs, bad, []File{
		{"le.pcap", Pcap(binary.LittleEndian, false, link, 65535, recs), 1},
		{"be.nsec.pcap", Pcap(binary.BigEndian, true, link, 65535, recs), 1},
		{"pcapng", ng, 2},
	}
}
