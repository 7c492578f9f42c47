package source

import (
	"encoding/binary"
	"fmt"
	"github.com/urldedupd/urldedupd/internal/capture/internal/capfile"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// committedCaptures are the test captures committed with package capture.
var committedCaptures = []string{"../testdata/captures/http.pcap", "../testdata/captures/http-any.pcap"}

// frameInfo is what a reader says of one frame.
type frameInfo struct {
	sec, nsec        int64
	caplen, len_     int
	link             layers.LinkType // ours; tshark's encapsulation number for tshark
	noTime, tsharkOK bool
}

// readAll reads a file with FileSource.
func readAll(t *testing.T, opts *FileOptions, path string) ([]frameInfo, *FileSource, error) {
	t.Helper()
	src, err := OpenFilesWith(opts, path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []frameInfo
	var p Packet
	for n := 0; n < 1_000_000; n++ {
		if err := src.Next(&p); err == io.EOF {
			return got, src, nil
		} else if err != nil {
			return got, src, err
		}
		if len(p.Data) != p.Info.CaptureLength {
			t.Fatalf("%s: frame %d: %d bytes of data, caplen %d", path, len(got)+1, len(p.Data), p.Info.CaptureLength)
		}
		ts := p.Info.Timestamp
		got = append(got, frameInfo{sec: ts.Unix(), nsec: int64(ts.Nanosecond()), caplen: len(p.Data), len_: p.Info.Length, link: p.Link})
	}
	t.Fatal("more than a million frames")
	return nil, nil, nil
}

// tsharkFrames reads a file with tshark.
func tsharkFrames(t *testing.T, path string) []frameInfo {
	t.Helper()
	out, err := exec.Command("tshark", "-n", "-r", path, "-T", "fields", "-e", "frame.time_epoch",
		"-e", "frame.cap_len", "-e", "frame.len", "-e", "frame.encap_type").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", path, err)
	}
	var fr []frameInfo
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 4 {
			t.Fatalf("tshark line %q", l)
		}
		sec, frac, _ := strings.Cut(f[0], ".")
		var x frameInfo
		x.sec, _ = strconv.ParseInt(sec, 10, 64)
		x.nsec, _ = strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		x.caplen, _ = strconv.Atoi(f[1])
		x.len_, _ = strconv.Atoi(f[2])
		enc, _ := strconv.Atoi(f[3])
		x.link = layers.LinkType(enc)
		fr = append(fr, x)
	}
	return fr
}

// compareWithTshark: same frames, lengths and times; link types that map
// one to one onto tshark's encapsulations. Frames from simple packet
// blocks have no time of their own (ours repeat the previous one).
func compareWithTshark(t *testing.T, path string, noTime map[int]bool) int {
	t.Helper()
	ours, _, err := readAll(t, nil, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	theirs := tsharkFrames(t, path)
	if len(ours) != len(theirs) {
		t.Fatalf("%s: %d frames, tshark %d", path, len(ours), len(theirs))
	}
	encap := map[layers.LinkType]layers.LinkType{}
	back := map[layers.LinkType]layers.LinkType{}
	for i, o := range ours {
		th := theirs[i]
		if e, ok := encap[o.link]; ok && e != th.link || back[th.link] != 0 && back[th.link] != o.link {
			t.Fatalf("%s: frame %d: link type %d, tshark encapsulation %d (mapping so far %v)", path, i+1, o.link, th.link, encap)
		}
		encap[o.link], back[th.link] = th.link, o.link
		if o.caplen != th.caplen || o.len_ != th.len_ || !noTime[i] && (o.sec != th.sec || o.nsec != th.nsec) {
			t.Fatalf("%s: frame %d: ours %+v, tshark %+v", path, i+1, o, th)
		}
	}
	return len(ours)
}

// The readers agree with tshark on every committed capture, as made and
// converted by editcap and tshark, and written here in the other byte
// order and resolutions, as pcapng with several sections of both byte
// orders, blocks to skip, obsolete and simple packet blocks.
func TestReadersAgreeWithTshark(t *testing.T) {
	tmp := t.TempDir()
	for _, path := range committedCaptures {
		base := filepath.Join(tmp, filepath.Base(path))
		for _, conv := range [][]string{
			{"editcap", "-F", "pcapng", path, base + ".editcap.pcapng"},
			{"editcap", "-F", "nsecpcap", path, base + ".nsec.pcap"},
			{"tshark", "-r", path, "-F", "pcapng", "-w", base + ".tshark.pcapng"},
		} {
			if out, err := exec.Command(conv[0], conv[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %v %s", conv, err, out)
			}
		}
		recs := capfile.LoadRecords(t, path)
		link := recs[0].Link
		files := map[string][]byte{
			".be.pcap":      capfile.Pcap(binary.BigEndian, false, link, 65535, recs),
			".be.nsec.pcap": capfile.Pcap(binary.BigEndian, true, link, 65535, recs),
			".le.nsec.pcap": capfile.Pcap(binary.LittleEndian, true, link, 65535, recs),
			".snaplen.pcap": capfile.Pcap(binary.LittleEndian, false, link, 64, recs), // records over the claimed snaplen
		}
		for suffix, data := range files {
			if err := os.WriteFile(base+suffix, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, v := range []string{path, base + ".editcap.pcapng", base + ".nsec.pcap", base + ".tshark.pcapng",
			base + ".be.pcap", base + ".be.nsec.pcap", base + ".le.nsec.pcap", base + ".snaplen.pcap"} {
			if n := compareWithTshark(t, v, nil); n != len(recs) {
				t.Errorf("%s: %d frames, want %d", v, n, len(recs))
			}
		}
	}

	// Sections alternating byte order, each with both captures' link
	// types as interfaces 0 and 1 and a resolution of its own (10^-6 by
	// default, 10^-9, 2^-20 and 2^-30); packets as enhanced, obsolete and
	// simple packet blocks; other blocks between them.
	eth, sll2 := capfile.LoadRecords(t, committedCaptures[0]), capfile.LoadRecords(t, committedCaptures[1])
	var ng []byte
	noTime := map[int]bool{}
	frames := 0
	resolutions := []byte{0, 9, 0x80 | 20, 0x80 | 30}
	for sec := range 4 {
		var o capfile.ByteOrder = binary.LittleEndian
		if sec%2 == 1 {
			o = binary.BigEndian
		}
		res := resolutions[sec]
		ng = append(ng, capfile.NgSHB(o)...)
		ng = append(ng, capfile.NgIDB(o, layers.LinkTypeEthernet, 0, res)...)
		ng = append(ng, capfile.NgOtherBlocks(o)...)
		ng = append(ng, capfile.NgIDB(o, layers.LinkTypeLinuxSLL2, 262144, res)...)
		for i := sec * 40; i < sec*40+40 && i < len(eth); i++ {
			for iface, r := range []capfile.Record{eth[i], sll2[i]} {
				switch i % 5 {
				case 3:
					ng = append(ng, capfile.NgPB(o, iface, capfile.NgUnits(r.TS, res), r.Data, r.Orig)...)
				case 4:
					if iface == 0 { // a simple packet block is always interface 0
						ng = append(ng, capfile.NgSPB(o, r.Data, r.Orig)...)
						noTime[frames] = true
						break
					}
					fallthrough
				default:
					ng = append(ng, capfile.NgEPB(o, iface, capfile.NgUnits(r.TS, res), r.Data, r.Orig)...)
				}
				frames++
			}
			if i%17 == 0 {
				ng = append(ng, capfile.NgOtherBlocks(o)...)
			}
		}
	}
	multi := filepath.Join(tmp, "sections.pcapng")
	os.WriteFile(multi, ng, 0o644)
	if n := compareWithTshark(t, multi, noTime); n != frames {
		t.Fatalf("%s: %d frames, want %d", multi, n, frames)
	}
	gz := filepath.Join(tmp, "sections.pcapng.gz")
	os.WriteFile(gz, capfile.Gzipped(ng), 0o644)
	ours, _, err := readAll(t, nil, gz)
	plain, _, _ := readAll(t, nil, multi)
	if err != nil || fmt.Sprint(ours) != fmt.Sprint(plain) {
		t.Fatalf("gzip copy: %v; %d frames, plain %d", err, len(ours), len(plain))
	}
	t.Logf("%d frames in 4 sections agree with tshark", frames)
}

// A record over MaxRecord is skipped as it is read and counted; the next
// one is read. The snap length in the header does not raise the maximum.
func TestMaxRecord(t *testing.T) {
	tmp := t.TempDir()
	ts := time.Unix(1_700_000_000, 0)
	small, big := make([]byte, 60), make([]byte, 3<<20) // big: over the default and the read buffer
	for i := range big {
		big[i] = byte(i)
	}
	recs := []capfile.Record{{TS: ts, Data: small, Orig: 60}, {TS: ts, Data: big, Orig: len(big)},
		{TS: ts, Data: small[:50], Orig: 50}, {TS: ts, Data: big[:2000], Orig: 2000}, {TS: ts, Data: small, Orig: 60}}
	o := binary.LittleEndian
	var ng []byte
	ng = append(ng, capfile.NgSHB(o)...)
	ng = append(ng, capfile.NgIDB(o, layers.LinkTypeEthernet, 0, 0)...)
	for _, r := range recs {
		ng = append(ng, capfile.NgEPB(o, 0, capfile.NgUnits(r.TS, 0), r.Data, r.Orig)...)
	}
	pcap := capfile.Pcap(binary.BigEndian, false, layers.LinkTypeEthernet, 0xffffffff, recs)
	for _, tc := range []struct {
		name      string
		data      []byte
		max       int
		want      []int // caplens read
		skipped   uint64
		truncated bool
	}{
		{"pcap, default", pcap, 0, []int{60, 50, 2000, 60}, 1, false},
		{"pcap.gz, default", capfile.Gzipped(pcap), 0, []int{60, 50, 2000, 60}, 1, false},
		{"pcapng, default", ng, 0, []int{60, 50, 2000, 60}, 1, false},
		{"pcapng.gz, default", capfile.Gzipped(ng), 0, []int{60, 50, 2000, 60}, 1, false},
		{"pcap, 55 bytes", pcap, 55, []int{50}, 4, false},
		{"pcapng, 55 bytes", ng, 55, []int{50}, 4, false},
		{"pcap, at the cap", pcap, 2000, []int{60, 50, 2000, 60}, 1, false},
		{"pcapng, 4 MiB", capfile.Gzipped(ng), 4 << 20, []int{60, len(big), 50, 2000, 60}, 0, false},
		{"pcap ending inside the skipped record", pcap[:24+16+60+16+1<<20], 0, []int{60}, 0, true},
		{"pcapng ending inside the skipped block", capfile.Gzipped(ng[:len(capfile.NgSHB(o))+len(capfile.NgIDB(o, 1, 0, 0))+len(capfile.NgEPB(o, 0, 0, small, 60))+2<<20]), 0, []int{60}, 0, true},
	} {
		path := filepath.Join(tmp, strings.ReplaceAll(tc.name, " ", "_"))
		os.WriteFile(path, tc.data, 0o644)
		got, src, err := readAll(t, &FileOptions{MaxRecord: tc.max}, path)
		var lens []int
		for _, f := range got {
			lens = append(lens, f.caplen)
		}
		if fmt.Sprint(lens) != fmt.Sprint(tc.want) || src.SkippedRecords() != tc.skipped {
			t.Errorf("%s: read %v, skipped %d; want %v, %d", tc.name, lens, src.SkippedRecords(), tc.want, tc.skipped)
		}
		if tc.truncated != (err != nil) || err != nil && (!strings.Contains(err.Error(), ErrTruncated.Error()) || !strings.Contains(err.Error(), "packet 2 (")) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// A bad block length is corrupt, with the block's offset, never
// "truncated" (issue 9: it was).
func TestBadBlockLength(t *testing.T) {
	o := binary.LittleEndian
	head := append(capfile.NgSHB(o), capfile.NgIDB(o, layers.LinkTypeEthernet, 0, 0)...)
	epb := capfile.NgEPB(o, 0, 1, make([]byte, 60), 60)
	set := func(b []byte, at int, v uint32) []byte {
		b = append([]byte(nil), b...)
		o.PutUint32(b[at:], v)
		return b
	}
	at := len(head) + len(epb) // the second packet's block
	tail := append(append([]byte(nil), epb...), epb...)
	for _, tc := range []struct {
		name string
		blk  []byte // replaces the second packet block
		want string
	}{
		{"not a multiple of 4", set(epb, 4, uint32(len(epb))+1), "is not a multiple of 4"},
		{"below the minimum", set(epb, 4, 28), "less than its minimum, 32"},
		{"zero", set(epb, 4, 0), "less than its minimum"},
		{"trailing length differs", set(epb, len(epb)-4, uint32(len(epb))+4), "at its start but"},
		{"leading length differs", set(epb, 4, uint32(len(epb))-4), "at its start but"},
		{"captured length past the block", set(epb, 20, 1000), "does not fit in block length"},
		{"huge", set(epb, 4, 0xfffffffc), "bytes for options, more than the 1048576 read"},
		{"options over the cap", capfile.NgBlock(o, capfile.NgEnhancedPacket, append(append(o.AppendUint32(make([]byte, 12), 60), o.AppendUint32(nil, 60)...), make([]byte, 60+ngMaxOptions+4)...)), "leaves 1048580 bytes for options"},
		{"section header, options over the cap", set(capfile.NgSHB(o), 4, 28+ngMaxOptions+4), "leaves 1048580 bytes for options"},
		{"unknown interface", set(epb, 8, 7), "for interface 7, but the section has 1"},
		{"other block, not a multiple of 4", set(capfile.NgBlock(o, 5, make([]byte, 20)), 4, 33), "is not a multiple of 4"},
		{"other block, trailing length differs", set(capfile.NgBlock(o, 5, make([]byte, 20)), 28, 36), "at its start but"},
		{"interface, below the minimum", set(capfile.NgIDB(o, 1, 0, 0), 4, 16), "less than its minimum, 20"},
		{"interface, option past the block", set(capfile.NgIDB(o, 1, 0, 0), 16, 0xff000002), "runs past the block"},
		{"interface, resolution out of range", capfile.NgIDB(o, 1, 0, 20), "timestamp resolution 0x14 out of range"},
		{"section header, below the minimum", set(capfile.NgSHB(o), 4, 24), "less than its minimum, 28"},
		{"section header, bad byte-order magic", set(capfile.NgSHB(o), 8, 0x12345678), "byte-order magic"},
	} {
		data := append(append(append([]byte(nil), head...), epb...), tc.blk...)
		data = append(data, tail...)
		path := filepath.Join(t.TempDir(), "bad.pcapng")
		os.WriteFile(path, data, 0o644)
		_, _, err := readAll(t, nil, path)
		if err == nil || !strings.Contains(err.Error(), ErrCorrupt.Error()) ||
			!strings.Contains(err.Error(), fmt.Sprintf("(block at byte %d)", at)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// The interface cap is reached and reported; one fewer is read.
func TestInterfaceCap(t *testing.T) {
	o := binary.BigEndian
	idb := capfile.NgIDB(o, layers.LinkTypeEthernet, 0, 0)
	for _, n := range []int{ngMaxInterfaces, ngMaxInterfaces + 1} {
		data := capfile.NgSHB(o)
		for range n {
			data = append(data, idb...)
		}
		data = append(data, capfile.NgEPB(o, n-1, 5, make([]byte, 60), 60)...)
		path := filepath.Join(t.TempDir(), "ifaces.pcapng")
		os.WriteFile(path, data, 0o644)
		got, _, err := readAll(t, nil, path)
		if n == ngMaxInterfaces && (err != nil || len(got) != 1) {
			t.Fatalf("%d interfaces: %v, %d frames", n, err, len(got))
		}
		if n > ngMaxInterfaces && (err == nil || !strings.Contains(err.Error(), "more than 65536 interfaces")) {
			t.Fatalf("%d interfaces: %v", n, err)
		}
	}
}

// Reading a frame allocates nothing, plain or gzip, pcap or pcapng.
func TestFileSourceAllocations(t *testing.T) {
	recs := capfile.LoadRecords(t, committedCaptures[0])
	o := binary.LittleEndian
	ng := append(capfile.NgSHB(o), capfile.NgIDB(o, layers.LinkTypeEthernet, 0, 0)...)
	for _, r := range recs {
		ng = append(ng, capfile.NgEPB(o, 0, capfile.NgUnits(r.TS, 0), r.Data, r.Orig)...)
	}
	pcap := capfile.Pcap(o, false, layers.LinkTypeEthernet, 65535, recs)
	for name, data := range map[string][]byte{"pcap": pcap, "pcapng": ng, "pcap.gz": capfile.Gzipped(pcap), "pcapng.gz": capfile.Gzipped(ng)} {
		path := filepath.Join(t.TempDir(), name)
		os.WriteFile(path, data, 0o644)
		src, err := OpenFiles(path)
		if err != nil {
			t.Fatal(err)
		}
		var p Packet
		if err := src.Next(&p); err != nil { // opens the file
			t.Fatal(err)
		}
		n := testing.AllocsPerRun(len(recs)-2, func() {
			if err := src.Next(&p); err != nil {
				t.Fatal(err)
			}
		})
		src.Close()
		if n != 0 {
			t.Errorf("%s: %v allocations per frame", name, n)
		}
	}
}

// A directory is refused when the source is opened.
func TestOpenDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := OpenFiles(committedCaptures[0], dir)
	if err == nil || !strings.Contains(err.Error(), dir+": is a directory") {
		t.Fatalf("%v", err)
	}
}

// A record whose captured length exceeds its original length (some writers
// make them) does not end the file: it is read whole, as tshark reads it,
// its original length raised to its captured length and counted, and
// every record after it is read (issue 9 review: the pcap reader ended
// the file there with ErrCorrupt). The requests found are those of the
// unchanged capture (capture's TestCapturedLongerThanOriginalRequests).
func TestCapturedLongerThanOriginal(t *testing.T) {
	tmp := t.TempDir()
	path := committedCaptures[0]
	recs, bad, files := capfile.LongerThanOriginal(t, path)
	for _, f := range files {
		plain := filepath.Join(tmp, f.Name)
		if err := os.WriteFile(plain, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		theirs := tsharkFrames(t, plain)
		for _, p := range []string{plain, plain + ".gz"} {
			if p != plain {
				if err := os.WriteFile(p, capfile.Gzipped(f.Data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ours, src, err := readAll(t, nil, p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if len(ours) != len(theirs) || len(ours) != f.Copies*len(recs) {
				t.Fatalf("%s: %d frames, tshark %d, written %d", p, len(ours), len(theirs), f.Copies*len(recs))
			}
			for i, o := range ours {
				th := theirs[i]
				if o.caplen != th.caplen || o.len_ != max(th.len_, th.caplen) {
					t.Fatalf("%s: frame %d: caplen %d, len %d; tshark %d, %d", p, i+1, o.caplen, o.len_, th.caplen, th.len_)
				}
				if _, ok := bad[i%len(recs)]; ok != (th.len_ < th.caplen) {
					t.Fatalf("%s: frame %d: tshark says len %d, caplen %d", p, i+1, th.len_, th.caplen)
				}
			}
			if n := src.ClampedRecords(); n != uint64(f.Copies*len(bad)) {
				t.Errorf("%s: ClampedRecords %d, want %d", p, n, f.Copies*len(bad))
			}
		}
	}
}
