package main_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	bin "encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"
)

// A directory given to replay is refused by name, exit code 1 (issue 9:
// it was read as "0 bytes").
func TestReplayDirectory(t *testing.T) {
	t.Parallel()
	state, dir := filepath.Join(t.TempDir(), "state"), t.TempDir()
	out, stderr, code := run(t, nil, "--dir", state, "replay", capturePath, dir)
	if code != 1 || out != "" || !strings.Contains(stderr, dir+": is a directory") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// --max-record: the records of the committed capture longer than it are
// skipped and counted (as tshark counts them), with --all and --json alike;
// 0 is a usage error.
func TestReplayMaxRecordFlag(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state")
	out, err := exec.Command("tshark", "-n", "-r", capturePath, "-Y", "frame.cap_len > 200").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	over := strings.Count(string(out), "\n")
	if over == 0 {
		t.Fatal("no record over 200 bytes in the capture")
	}
	for _, mode := range []string{"--all", "--json"} {
		_, stderr, code := run(t, nil, "--dir", state, "replay", mode, "--max-record", "200", capturePath)
		if want := fmt.Sprintf("records over --max-record 200 bytes skipped %d\n", over); code != 0 || !strings.Contains(stderr, want) {
			t.Fatalf("%s: exit %d, stderr %q, want %q", mode, code, stderr, want)
		}
	}
	if _, stderr, code := run(t, nil, "--dir", state, "replay", capturePath); code != 0 || strings.Contains(stderr, "max-record") {
		t.Fatalf("default: exit %d, %q", code, stderr)
	}
	if _, stderr, code := run(t, nil, "--dir", state, "replay", "--max-record", "0", capturePath); code != 2 || !strings.Contains(stderr, "--max-record 0") {
		t.Fatalf("--max-record 0: exit %d, %q", code, stderr)
	}
}

// hugeRecordCapture writes a gzip-compressed pcap or pcapng holding one
// record of size zero bytes (its header claiming that length and a snap
// length of 2^32 - 1) followed by every record of the committed capture.
func hugeRecordCapture(t *testing.T, path, format string, size uint32) {
	t.Helper()
	committed, err := os.ReadFile(capturePath)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	zw, _ := gzip.NewWriterLevel(bw, gzip.BestSpeed)
	le := bin.LittleEndian
	var b []byte
	ts := uint32(time.Now().Unix())
	if format == "pcap" {
		b = append(b, committed[:16]...) // magic, version, zone, sigfigs: little-endian, µs
		b = le.AppendUint32(b, 1<<32-1)  // snap length
		b = append(b, committed[20:24]...)
		b = le.AppendUint32(b, ts)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, size)
		b = le.AppendUint32(b, size)
	} else {
		shb := le.AppendUint32(nil, 0x0a0d0d0a)
		shb = le.AppendUint32(shb, 28)
		shb = le.AppendUint32(shb, 0x1a2b3c4d)
		shb = le.AppendUint16(shb, 1)
		shb = le.AppendUint16(shb, 0)
		shb = le.AppendUint64(shb, ^uint64(0))
		b = le.AppendUint32(shb, 28)
		b = le.AppendUint32(b, 1) // interface: Ethernet, snap length 2^32 - 1
		b = le.AppendUint32(b, 20)
		b = le.AppendUint32(b, 1)
		b = le.AppendUint32(b, 1<<32-1)
		b = le.AppendUint32(b, 20)
		us := uint64(ts) * 1e6
		b = append(b, epbHeader(size, uint32(us>>32), uint32(us))...)
	}
	zw.Write(b)
	zeros := make([]byte, 1<<20)
	for left := int64(size); left > 0; left -= int64(len(zeros)) {
		zw.Write(zeros[:min(left, int64(len(zeros)))])
	}
	if format == "pcap" {
		zw.Write(committed[24:])
	} else {
		zw.Write(le.AppendUint32(nil, 32+size)) // trailing length
		r, err := pcapgo.NewReader(bytes.NewReader(committed))
		if err != nil {
			t.Fatal(err)
		}
		for {
			data, ci, err := r.ReadPacketData()
			if err != nil {
				break
			}
			us := uint64(ci.Timestamp.UnixMicro())
			padded := (len(data) + 3) &^ 3
			blk := epbHeader(uint32(padded), uint32(us>>32), uint32(us))
			le.PutUint32(blk[20:], uint32(len(data))) // captured length
			le.PutUint32(blk[24:], uint32(len(data))) // original length
			blk = append(blk, data...)
			blk = append(blk, make([]byte, padded-len(data))...)
			zw.Write(le.AppendUint32(blk, uint32(32+padded)))
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
}

// epbHeader is the start of a pcapng enhanced packet block on interface 0
// for padded bytes of data (and no options), up to the data.
func epbHeader(padded, tsHigh, tsLow uint32) []byte {
	le := bin.LittleEndian
	b := le.AppendUint32(nil, 6)
	b = le.AppendUint32(b, 32+padded)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, tsHigh)
	b = le.AppendUint32(b, tsLow)
	b = le.AppendUint32(b, padded)
	return le.AppendUint32(b, padded)
}

// A gzip file of a few MB holding one record of 2^31 or 2^30 bytes, then a
// normal capture: replay skips the record in bounded memory (peak RSS at
// most the mapped state, 512 MiB, plus 256 MiB), counts it, and finds
// every request after it. (Before the fix, 2^31 bytes took replay to
// 8.4 GB.)
func TestReplayHugeRecordMemory(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	state := filepath.Join(tmp, "state")
	if out, err := exec.Command(binary, "--dir", state, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	want := len(expectedURLs(t))
	for i, tc := range []struct {
		format string
		size   uint32
	}{{"pcap", 1 << 31}, {"pcap", 1 << 30}, {"pcapng", 1 << 31}, {"pcapng", 1 << 30}} {
		path := filepath.Join(tmp, fmt.Sprintf("huge-%d.%s.gz", tc.size, tc.format))
		hugeRecordCapture(t, path, tc.format, tc.size)
		fi, _ := os.Stat(path)
		mode := []string{"--all", "--json"}[i%2]
		cmd := exec.Command(binary, "--dir", state, "replay", mode, path)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		rss, err := runPeakRSS(cmd)
		rssMiB := rss >> 20
		found := strings.Count(stdout.String(), "http://")
		t.Logf("%s (%d bytes, record of %d): %v, %d requests, peak RSS %d MiB, %.1f s", filepath.Base(path), fi.Size(), tc.size, err, found, rssMiB, time.Since(start).Seconds())
		if err != nil || found != want || !strings.Contains(stderr.String(), "records over --max-record 1048576 bytes skipped 1\n") {
			t.Fatalf("%s: %v, %d requests of %d\n%s", path, err, found, want, stderr.String())
		}
		if rssMiB > 512+256 {
			t.Fatalf("%s: peak RSS %d MiB, over the mapped state + 256 MiB", path, rssMiB)
		}
		os.Remove(path)
	}
}

// tcpdump's habits: -r FILE and "-" (standard input) read what FILE does;
// -c N stops at the Nth record; a bad use is a usage error.
func TestReplayTcpdumpHabits(t *testing.T) {
	t.Parallel()
	replay := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		var in io.Reader
		if stdin != "" {
			f, err := os.Open(stdin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			in = f
		}
		dir := filepath.Join(t.TempDir(), "state")
		return run(t, in, append([]string{"--dir", dir, "replay"}, args...)...)
	}
	want, _, code := replay("", capturePath)
	if code != 0 || strings.Count(want, "\n") < 10 {
		t.Fatalf("replay FILE: exit %d, %q", code, want)
	}
	for _, c := range []struct {
		name, stdin string
		args        []string
	}{
		{"-r FILE", "", []string{"-r", capturePath}},
		{"-", capturePath, []string{"-"}},
		{"-r -", capturePath, []string{"-r", "-"}},
	} {
		if out, stderr, code := replay(c.stdin, c.args...); code != 0 || out != want {
			t.Errorf("%s: exit %d, %d lines (want %d): %s", c.name, code, strings.Count(out, "\n"), strings.Count(want, "\n"), stderr)
		}
	}
	first := strings.SplitAfter(want, "\n")
	for _, n := range []int{1, 3} {
		out, stderr, code := replay("", "-c", strconv.Itoa(n), capturePath)
		if code != 0 || out != strings.Join(first[:n], "") {
			t.Errorf("-c %d: exit %d, %q, want the first %d records: %s", n, code, out, n, stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no capture file"},
		{[]string{"-", "-"}, "given twice"},
		{[]string{"-r", "-", "-"}, "given twice"},
	} {
		if _, stderr, code := replay(capturePath, c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("replay %v: exit %d, %q; want 2 saying %q", c.args, code, stderr, c.want)
		}
	}
	if _, stderr, code := run(t, nil, "capture", "-i", "lo", "--bpf", "tcp", "udp"); code != 2 || !strings.Contains(stderr, "filter given twice") {
		t.Errorf("capture with --bpf and a filter after the flags: exit %d, %q", code, stderr)
	}
}

// --log-format: json is --json byte for byte, all is --all; ecs writes one
// ECS document per record, saying what the JSON record says (its
// community_id, its JA4, its server name); a format not known, or one
// that disagrees with --json or --all, is a usage error (exit 2) before
// any file is read.
func TestReplayLogFormat(t *testing.T) {
	t.Parallel()
	const starttls = "../../internal/capture/testdata/captures/starttls.pcap"
	replay := func(args ...string) (string, string, int) {
		t.Helper()
		return run(t, nil, append([]string{"--dir", filepath.Join(t.TempDir(), "state"), "replay"}, args...)...)
	}
	for _, c := range [][2]string{{"--json", "json"}, {"--all", "all"}} {
		a, _, code1 := replay(c[0], starttls)
		b, _, code2 := replay("--log-format", c[1], starttls)
		if code1 != 0 || code2 != 0 || a != b || a == "" {
			t.Errorf("%s and --log-format %s: exit %d and %d, %q and %q", c[0], c[1], code1, code2, a, b)
		}
	}
	js, _, _ := replay("--json", starttls)
	ecs, stderr, code := replay("--log-format", "ecs", starttls)
	jl, el := strings.Split(strings.TrimSpace(js), "\n"), strings.Split(strings.TrimSpace(ecs), "\n")
	if code != 0 || len(el) != len(jl) || len(jl) != 17 {
		t.Fatalf("ecs: exit %d, %d documents for %d records: %s", code, len(el), len(jl), stderr)
	}
	for i := range jl {
		var rec struct{ Community_id, Ja4, Sni, URL string }
		var doc struct {
			Network   struct{ Community_id string }
			TLS       struct{ Client struct{ Server_name string } }
			URL       struct{ Original string }
			Urldedupd struct{ Ja4 string }
		}
		if err := json.Unmarshal([]byte(jl[i]), &rec); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(el[i]), &doc); err != nil {
			t.Fatalf("%s: %v", el[i], err)
		}
		if rec.Community_id == "" || rec.Ja4 == "" || doc.Network.Community_id != rec.Community_id || doc.Urldedupd.Ja4 != rec.Ja4 ||
			doc.TLS.Client.Server_name != rec.Sni || doc.URL.Original != rec.URL {
			t.Errorf("record %s\ndocument %s", jl[i], el[i])
		}
	}
	// The workers' cap (16) and floor, for capture and serve alike, and
	// serve's RESP loops: usage errors before any socket is opened.
	for _, args := range [][]string{{"capture", "-i", "lo", "--workers", "17"}, {"capture", "-i", "lo", "--workers", "0"}, {"serve", "--iface", "lo", "--workers", "17"},
		{"serve", "--resp-listen", "127.0.0.1:0", "--resp-loops", "17"}, {"serve", "--resp-listen", "127.0.0.1:0", "--resp-loops", "-1"}} {
		if _, stderr, code := run(t, nil, append([]string{"--dir", filepath.Join(t.TempDir(), "state")}, args...)...); code != 2 || !strings.Contains(stderr, args[len(args)-2]) {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	for _, args := range [][]string{{"--log-format", "xml"}, {"--json", "--log-format", "ecs"}, {"--all", "--log-format", "json"}} {
		if _, stderr, code := replay(append(args, "no-such.pcap")...); code != 2 || !strings.Contains(stderr, "--log-format") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}
