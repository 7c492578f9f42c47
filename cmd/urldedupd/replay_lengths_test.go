package main_test

import (
	bin "encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// replay of a capture in which every record's original length is one byte
// less than its captured length (some writers make such records): every
// URL is printed, exit 0, and the summary says how many records were read
// whole (issue 9 review: the first such record ended the file, exit 1).
func TestReplayCapturedLongerThanOriginal(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(capturePath)
	if err != nil {
		t.Fatal(err)
	}
	le := bin.LittleEndian
	if le.Uint32(data) != 0xa1b2c3d4 {
		t.Fatal("not a little-endian microsecond pcap")
	}
	records := 0
	for off := 24; off+16 <= len(data) && records < 100_000; records++ {
		caplen := le.Uint32(data[off+8:])
		le.PutUint32(data[off+12:], caplen-1)
		off += 16 + int(caplen)
	}
	pcap := filepath.Join(t.TempDir(), "longer.pcap")
	if err := os.WriteFile(pcap, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, nil, "--dir", filepath.Join(t.TempDir(), "state"), "replay", pcap)
	got := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(got)
	if want := expectedURLs(t); code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("replay: exit %d, %d URLs of %d; stderr %q", code, len(got), len(want), stderr)
	}
	if line := "records with captured length over original length read whole " + strconv.Itoa(records) + "\n"; records < 50 || !strings.Contains(stderr, line) {
		t.Fatalf("stderr %q; want %q (of %d records)", stderr, line, records)
	}
}
