package capture

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"github.com/urldedupd/urldedupd/internal/capture/internal/capfile"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// FuzzReadCapture runs arbitrary bytes as a capture file through the whole
// engine: it must end with an error or a clean end, never a panic, and only
// report absolute URLs.
func FuzzReadCapture(f *testing.F) {
	tmp := f.TempDir()
	t := &testing.T{}
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:80")
	for i, fmt := range []format{fmtPcap, fmtPcapng, fmtGzip} {
		frames := [][]byte{
			frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 1, syn: true}),
			frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 2, ack: true, payload: get("/seed", "f.example")}),
		}
		p := filepath.Join(tmp, "seed"+string(rune('0'+i)))
		writeCapture(t, p, fmt, layers.LinkTypeEthernet, frames)
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte("\xd4\xc3\xb2\xa1junk"))
	zw.Close()
	f.Add(z.Bytes())
	for _, seed := range readerSeeds(t) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := OpenFilesWith(&FileOptions{MaxRecord: fuzzMaxRecord}, p)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		var got []string
		e := NewEngine(nil, func(r *Request) { got = append(got, string(r.Method)+" "+string(r.URL)) })
		err = e.Run(context.Background(), src)
		if err != nil && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error of no kind: %v", err)
		}
		for _, u := range got {
			if !bytes.Contains([]byte(u), []byte(" http://")) {
				t.Fatalf("reported %q", u)
			}
		}
	})
}

// fuzzMaxRecord is small, so that the fuzzer reaches the skipping of
// records over the maximum with small inputs.
const fuzzMaxRecord = 1500

// readerSeeds are captures for the readers' paths: pcapng in both byte
// orders with several sections and every packet block type, a record over
// the maximum (plain and pcapng, whole and ending inside it), big-endian
// nanosecond pcap, bad block lengths.
func readerSeeds(t *testing.T) [][]byte {
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:80")
	ts := time.Unix(1_700_000_000, 0)
	syn := frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 1, syn: true})
	req := frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 2, ack: true, payload: get("/seed", "f.example")})
	big := make([]byte, fuzzMaxRecord+100)
	recs := []capfile.Record{{TS: ts, Data: syn, Orig: len(syn)}, {TS: ts, Data: big, Orig: len(big)}, {TS: ts, Data: req, Orig: len(req)}}
	var seeds [][]byte
	pcap := capfile.Pcap(binary.BigEndian, true, layers.LinkTypeEthernet, 64, recs)
	seeds = append(seeds, pcap, pcap[:len(pcap)-len(req)-16-50])
	var ng []byte
	for i, o := range []capfile.ByteOrder{binary.BigEndian, binary.LittleEndian} {
		ng = append(ng, capfile.NgSHB(o)...)
		ng = append(ng, capfile.NgIDB(o, layers.LinkTypeEthernet, 0, []byte{0, 0x80 | 20}[i])...)
		ng = append(ng, capfile.NgOtherBlocks(o)...)
		ng = append(ng, capfile.NgSPB(o, syn, len(syn))...)
		ng = append(ng, capfile.NgPB(o, 0, 5, big, len(big))...)
		ng = append(ng, capfile.NgEPB(o, 0, 6, req, len(req))...)
		seeds = append(seeds, ng)
	}
	bad := append([]byte(nil), ng...)
	binary.LittleEndian.PutUint32(bad[len(bad)-len(capfile.NgEPB(binary.LittleEndian, 0, 6, req, len(req)))+4:], 33)
	seeds = append(seeds, bad, ng[:len(ng)-len(req)-20], capfile.Gzipped(ng))
	return seeds
}

// The reader seeds reach what they are for: the record over the maximum
// skipped, the damaged ones ending with the right error.
func TestReaderSeeds(t *testing.T) {
	want := []struct {
		skipped uint64
		err     error
	}{{1, nil}, {0, ErrTruncated}, {1, nil}, {2, nil}, {2, ErrCorrupt}, {2, ErrTruncated}, {2, nil}}
	seeds := readerSeeds(t)
	if len(seeds) != len(want) {
		t.Fatalf("%d seeds", len(seeds))
	}
	for i, seed := range seeds {
		p := filepath.Join(t.TempDir(), "seed")
		os.WriteFile(p, seed, 0o644)
		src, err := OpenFilesWith(&FileOptions{MaxRecord: fuzzMaxRecord}, p)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)) })
		err = e.Run(context.Background(), src)
		if src.SkippedRecords() != want[i].skipped || !errors.Is(err, want[i].err) || err == nil && len(got) == 0 {
			t.Errorf("seed %d: skipped %d, %v, requests %q; want %d, %v", i, src.SkippedRecords(), err, got, want[i].skipped, want[i].err)
		}
		src.Close()
	}
}
