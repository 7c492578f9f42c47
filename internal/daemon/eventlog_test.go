package daemon

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func record(i int) []byte {
	return fmt.Appendf(nil, `{"url":"http://r.example/%d","new":true}`+"\n", i)
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// A reopen that cannot open the path keeps writing the old file, says so
// in Stats, and the next reopen that can switches files; no record is lost.
func TestEventLogReopenFails(t *testing.T) {
	tmp := t.TempDir()
	path := filepath.Join(tmp, "events.jsonl")
	l, err := OpenEventLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Write(record(0))
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	// A directory at the path: the open fails even for root.
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	err = l.Reopen()
	if err == nil || !strings.Contains(err.Error(), "still writing to the file it had before") {
		t.Fatalf("reopen onto a directory: %v", err)
	}
	if st := l.Stats(); !st.Stale || st.ReopenFailures != 1 || st.Lost != 0 {
		t.Fatalf("after a failed reopen: %+v", st)
	}
	l.Write(record(1))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := readLines(t, path+".1"); len(got) != 2 || got[1] != strings.TrimSpace(string(record(1))) {
		t.Fatalf("old file after a failed reopen: %q", got)
	}

	os.Remove(path)
	l.Write(record(2)) // buffered: goes to the old file on the switch
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	l.Write(record(3))
	l.Flush()
	if st := l.Stats(); st.Stale || st.ReopenFailures != 1 || st.Lost != 0 {
		t.Fatalf("after a good reopen: %+v", st)
	}
	if old, cur := readLines(t, path+".1"), readLines(t, path); len(old) != 3 || len(cur) != 1 ||
		cur[0] != strings.TrimSpace(string(record(3))) {
		t.Fatalf("old file %q, new file %q", old, cur)
	}
}

// Records that cannot be written are dropped and counted; Write never
// fails; once the file takes data again, records are written again.
func TestEventLogWriteFails(t *testing.T) {
	tmp := t.TempDir()
	path := filepath.Join(tmp, "events.jsonl")
	if err := os.Symlink("/dev/full", path); err != nil {
		t.Fatal(err)
	}
	l, err := OpenEventLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 10 {
		if n, err := l.Write(record(i)); n != len(record(i)) || err != nil {
			t.Fatalf("Write: %d %v", n, err)
		}
	}
	if err := l.Flush(); err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("flush to /dev/full: %v", err)
	}
	// A record larger than the buffer is written at once, and fails too.
	big := append(bytes.Repeat([]byte("x"), eventBuffer+1), '\n')
	l.Write(big)
	st := l.Stats()
	if st.Lost != 11 || st.WriteErrors != 2 || !st.Failing || st.LastError == nil {
		t.Fatalf("after failed writes: %+v", st)
	}

	// The switch succeeds though the old file refuses what was buffered:
	// that record is counted lost, and the reopen is no failure.
	l.Write(record(99))
	os.Remove(path)
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Lost != 12 || st.ReopenFailures != 0 {
		t.Fatalf("after reopening from /dev/full: %+v", st)
	}
	l.Write(record(11))
	l.Write(big)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Lost != 12 || st.Failing {
		t.Fatalf("after writing again: %+v", st)
	}
	if got := readLines(t, path); len(got) != 2 || got[0] != strings.TrimSpace(string(record(11))) || len(got[1]) != eventBuffer+1 {
		t.Fatalf("file after writing again: %d lines", len(got))
	}
}

// A failed start-up removes the event log it created, not one that was
// there.
func TestEventLogDiscard(t *testing.T) {
	tmp := t.TempDir()
	created, existing := filepath.Join(tmp, "new.jsonl"), filepath.Join(tmp, "old.jsonl")
	os.WriteFile(existing, record(0), 0o640)
	for _, p := range []string{created, existing} {
		l, err := OpenEventLog(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Discard(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(created); !os.IsNotExist(err) {
		t.Errorf("the created log is still there: %v", err)
	}
	if b, err := os.ReadFile(existing); err != nil || !bytes.Equal(b, record(0)) {
		t.Errorf("the existing log: %q %v", b, err)
	}
}

// Writing a record allocates nothing, whether the file takes it or not.
func TestEventLogWriteAllocs(t *testing.T) {
	for _, target := range []string{"file", "/dev/full"} {
		path := filepath.Join(t.TempDir(), "events.jsonl")
		if target != "file" {
			os.Symlink(target, path)
		}
		l, err := OpenEventLog(path)
		if err != nil {
			t.Fatal(err)
		}
		rec := record(1)
		if n := testing.AllocsPerRun(10000, func() { l.Write(rec) }); n != 0 {
			t.Errorf("%s: %v allocations per record", target, n)
		}
		l.Close()
	}
}

// A write cut short by a full file system leaves part of a record; the
// next write that succeeds first ends that line, so every later record is
// a line of its own. Needs root to mount a 3-page tmpfs.
func TestEventLogTornRecord(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, bytes.Repeat([]byte{'f'}, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(mnt, "events.jsonl")
	l, err := OpenEventLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rec := func(i int) []byte { return fmt.Appendf(nil, "%099d\n", i) } // 100 bytes
	for i := range 60 {
		l.Write(rec(i))
	}
	if err := l.Flush(); err != nil { // 6,000 bytes: two pages
		t.Fatal(err)
	}
	for i := 60; i < 100; i++ { // 4,000 more: 2,192 fit in the second page
		l.Write(rec(i))
	}
	if err := l.Flush(); err == nil {
		t.Fatal("a write past the tmpfs's last page did not fail")
	}
	// 21 whole records fit, and 92 bytes of the 22nd: it and the 18 after
	// it are lost.
	if st := l.Stats(); st.Lost != 19 || !st.Failing {
		t.Fatalf("after the cut write: %+v", st)
	}
	os.Remove(filler)
	l.Write(rec(100))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	want := func(i int) string { return strings.TrimSpace(string(rec(i))) }
	if len(lines) != 83 || lines[80] != want(80) || lines[81] != want(81)[:92] || lines[82] != want(100) {
		t.Fatalf("%d lines, from the 80th: %q", len(lines), lines[80:])
	}
}

func BenchmarkEventLogWrite(b *testing.B) {
	l, err := OpenEventLog(filepath.Join(b.TempDir(), "events.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rec := []byte(`{"ts":"2026-11-23T15:00:00.123456789Z","src":"192.0.2.2:40000","dst":"192.0.2.1:8080","method":"GET","url":"http://192.0.2.1:8080/item/12345?live=1","new":true}` + "\n")
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		l.Write(rec)
	}
}
