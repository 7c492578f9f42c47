package capture

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/urldedupd/urldedupd/internal/capture/internal/capfile"
)

// A record whose captured length exceeds its original length (some writers
// make them) does not end the file (source's TestCapturedLongerThanOriginal
// checks the frames): the requests found are those of the unchanged
// capture, plain and gzip, pcap and pcapng.
func TestCapturedLongerThanOriginalRequests(t *testing.T) {
	tmp := t.TempDir()
	path := committedCaptures[0]
	recs := capfile.LoadRecords(t, path)
	if len(recs) < 10 {
		t.Fatalf("%s: %d records", path, len(recs))
	}
	bad := map[int]int{len(recs) / 3: len(recs[len(recs)/3].Data) - 1, len(recs) / 2: 0} // record: its original length
	for i, orig := range bad {
		recs[i].Orig = orig
	}
	link := recs[0].Link
	var ng []byte
	for _, o := range []capfile.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		ng = append(ng, capfile.NgSHB(o)...)
		ng = append(ng, capfile.NgIDB(o, link, 0, 9)...)
		for i, r := range recs {
			if i%2 == 0 {
				ng = append(ng, capfile.NgEPB(o, 0, capfile.NgUnits(r.TS, 9), r.Data, r.Orig)...)
			} else {
				ng = append(ng, capfile.NgPB(o, 0, capfile.NgUnits(r.TS, 9), r.Data, r.Orig)...)
			}
		}
	}
	files := []struct {
		name   string
		data   []byte
		copies int // of the records
	}{
		{"le.pcap", capfile.Pcap(binary.LittleEndian, false, link, 65535, recs), 1},
		{"be.nsec.pcap", capfile.Pcap(binary.BigEndian, true, link, 65535, recs), 1},
		{"pcapng", ng, 2},
	}
	want := countRequests(t, path)
	if want == 0 {
		t.Fatalf("%s: no requests", path)
	}
	for _, f := range files {
		plain := filepath.Join(tmp, f.name)
		if err := os.WriteFile(plain, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(plain+".gz", capfile.Gzipped(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{plain, plain + ".gz"} {
			if n := countRequests(t, p); n != f.copies*want {
				t.Errorf("%s: %d requests, want %d", p, n, f.copies*want)
			}
		}
	}
}

// countRequests runs a file through an Engine and counts the requests.
func countRequests(t *testing.T, path string) int {
	t.Helper()
	src, err := OpenFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n := 0
	if err := NewEngine(nil, func(*Request) { n++ }).Run(context.Background(), src); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}
