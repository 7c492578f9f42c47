package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/signature"
)

const testID = 0x1234abcd

func sigsOf(vals ...uint64) []signature.Signature {
	s := make([]signature.Signature, len(vals))
	for i, v := range vals {
		s[i] = signature.Signature(v)
	}
	return s
}

// replayAll replays the journals of dir and returns the signatures applied.
func replayAll(t *testing.T, j *Journal) ([]signature.Signature, Replayed, []error) {
	t.Helper()
	var got []signature.Signature
	var warns []error
	synced := 0
	r, err := j.Replay(func(s []signature.Signature) error {
		got = append(got, s...)
		return nil
	}, func() error { synced++; return nil }, func(err error) { warns = append(warns, err) })
	if err != nil {
		t.Fatalf("Replay: %v", err)
	}
	if r.Files > 0 && synced != 1 {
		t.Fatalf("Replay of %d files synced the shards %d times, want 1", r.Files, synced)
	}
	return got, r, warns
}

func open(t *testing.T, dir string) *Journal {
	t.Helper()
	j, err := Open(dir, testID, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func logs(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, Dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestReplayGoneWriters(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	live, err := j.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	gone, err := j.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	live.Append(j.Epoch(), sigsOf(1, 2, 3), []bool{false, true, false})
	gone.Append(j.Epoch(), sigsOf(10, 11), make([]bool, 2))
	gone.Append(j.Epoch(), sigsOf(12), make([]bool, 1))
	if err := live.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := gone.Close(false); err != nil { // as if killed after a flush
		t.Fatal(err)
	}
	if n := len(logs(t, dir)); n != 4 {
		t.Fatalf("%d journal files, want 4 (two a writer)", n)
	}
	ro, err := Open(dir, testID, true)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := ro.Pending(); err != nil || n != 1 {
		t.Fatalf("Pending = %d, %v; want 1 (the live writer's is not)", n, err)
	}

	got, r, warns := replayAll(t, j)
	if want := sigsOf(10, 11, 12); !slices.Equal(got, want) {
		t.Fatalf("replayed %v, want %v (the live writer's journal is its own)", got, want)
	}
	if r.Writers != 1 || r.Files != 2 || r.Sigs != 3 || len(warns) != 0 {
		t.Fatalf("Replayed %+v, warnings %v", r, warns)
	}
	if n := len(logs(t, dir)); n != 2 {
		t.Fatalf("%d journal files after the replay, want the live writer's two", n)
	}
	if n, _ := ro.Pending(); n != 0 {
		t.Fatalf("Pending after replay = %d", n)
	}
	if err := live.Close(true); err != nil {
		t.Fatal(err)
	}
	if n := len(logs(t, dir)); n != 0 {
		t.Fatalf("%d journal files after Close(remove)", n)
	}
}

func TestForgetSkipsOlderFrames(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	w, err := j.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	w.Append(j.Epoch(), sigsOf(7, 8), make([]bool, 2)) // 7 is then forgotten
	synced := 0
	if err := j.Forget(func() error { return nil }, func() error { synced++; return nil }); err != nil {
		t.Fatal(err)
	}
	if synced != 1 {
		t.Fatalf("forget synced %d times", synced)
	}
	w.Append(j.Epoch(), sigsOf(9), make([]bool, 1))
	if err := w.Close(false); err != nil {
		t.Fatal(err)
	}
	j.Close()
	j = open(t, dir) // the done epoch is read from the file
	got, r, _ := replayAll(t, j)
	if want := sigsOf(9); !slices.Equal(got, want) || r.Skipped != 2 {
		t.Fatalf("replayed %v (skipped %d), want %v and 2 skipped", got, r.Skipped, want)
	}
}

func TestForgetErrorKeepsEpoch(t *testing.T) {
	j := open(t, t.TempDir())
	w, err := j.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(true)
	e := j.Epoch()
	boom := errors.New("boom")
	if err := j.Forget(func() error { return boom }, func() error { return nil }); !errors.Is(err, boom) {
		t.Fatalf("Forget = %v", err)
	}
	if j.Epoch() != e {
		t.Fatalf("epoch moved on a failed forget")
	}
}

// TestCheckpoint: a checkpoint whose shard sync fails keeps every frame;
// one that succeeds empties the file it left; a writer never makes a file
// after NewWriter (serve drops privileges after it).
func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	w, err := j.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	files := logs(t, dir)
	add := func(v uint64) { w.Append(j.Epoch(), sigsOf(v), make([]bool, 1)) }
	ok := func() error { return nil }
	add(1)
	if err := w.Checkpoint(func() error { return errors.New("disk gone") }); err == nil {
		t.Fatal("Checkpoint with a failing shard sync returned nil")
	}
	add(2)
	if err := w.Checkpoint(ok); err != nil { // empties the file holding 1
		t.Fatal(err)
	}
	add(3)
	if err := w.Checkpoint(ok); err != nil { // moves on, empties the one holding 2, 3
		t.Fatal(err)
	}
	add(4)
	if got := logs(t, dir); !slices.Equal(got, files) {
		t.Fatalf("files %v, then %v: a checkpoint made or removed one", files, got)
	}
	if err := w.Close(false); err != nil {
		t.Fatal(err)
	}
	got, _, _ := replayAll(t, j)
	if want := sigsOf(4); !slices.Equal(got, want) {
		t.Fatalf("replayed %v, want %v: what checkpoints covered is gone, the rest stays", got, want)
	}
}

// TestCheckpointFailureKeepsFrames: every frame appended before a
// checkpoint whose shard sync failed is replayed.
func TestCheckpointFailureKeepsFrames(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	w, err := j.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	fail := func() error { return errors.New("disk gone") }
	for v := uint64(1); v <= 3; v++ {
		w.Append(j.Epoch(), sigsOf(v), make([]bool, 1))
		if err := w.Checkpoint(fail); err == nil {
			t.Fatal("Checkpoint with a failing shard sync returned nil")
		}
	}
	if err := w.Close(false); err != nil {
		t.Fatal(err)
	}
	got, _, _ := replayAll(t, j)
	slices.Sort(got)
	if want := sigsOf(1, 2, 3); !slices.Equal(got, want) {
		t.Fatalf("replayed %v, want %v", got, want)
	}
}

// TestBurstIsBounded appends far more than the buffer holds: the buffer
// never grows past its cap, and every signature is in the file, in order.
func TestBurstIsBounded(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	w, err := j.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	const n = 3 * bufferCap / 8
	batch := make([]signature.Signature, 1000)
	seen := make([]bool, len(batch))
	for i := 0; i < n/len(batch); i++ {
		for k := range batch {
			batch[k] = signature.Signature(i*len(batch) + k)
		}
		w.Append(uint64(i/100), batch, seen) // a new epoch every 100 batches
		if cap(w.buf) > bufferCap {
			t.Fatalf("buffer grew to %d bytes, cap %d", cap(w.buf), bufferCap)
		}
	}
	if err := w.Close(false); err != nil {
		t.Fatal(err)
	}
	got, r, warns := replayAll(t, j)
	if len(got) != n/len(batch)*len(batch) || len(warns) != 0 {
		t.Fatalf("replayed %d signatures in %d frames, warnings %v", len(got), r.Frames, warns)
	}
	for i, s := range got {
		if uint64(s) != uint64(i) {
			t.Fatalf("signature %d is %d", i, s)
		}
	}
}

func TestAppendAllocatesNothing(t *testing.T) {
	j := open(t, t.TempDir())
	w, err := j.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(true)
	sigs, seen := sigsOf(1, 2, 3, 4), make([]bool, 4)
	if a := testing.AllocsPerRun(10000, func() { w.Append(j.Epoch(), sigs, seen) }); a != 0 {
		t.Fatalf("Append allocates %v a batch", a)
	}
}

func TestOpenRefuses(t *testing.T) {
	tests := []struct {
		name  string
		epoch []byte
		want  error
	}{
		{"short", []byte("UDJEPOCH"), ErrCorrupt},
		{"magic", bytes.Repeat([]byte{1}, epochSize), ErrCorrupt},
		{"other state", func() []byte {
			d := t.TempDir()
			j, err := Open(d, testID+1, false)
			if err != nil {
				t.Fatal(err)
			}
			w, err := j.NewWriter() // makes the epoch file
			if err != nil {
				t.Fatal(err)
			}
			w.Close(true)
			j.Close()
			b, err := os.ReadFile(filepath.Join(d, Dir, EpochName))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}(), ErrOtherState},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, Dir), 0o755)
			path := filepath.Join(dir, Dir, EpochName)
			if err := os.WriteFile(path, tt.epoch, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(dir, testID, false)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open = %v, want %v", err, tt.want)
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, tt.epoch) {
				t.Fatal("Open rewrote the epoch file it refused")
			}
		})
	}
}

// TestReplayCorruptKeepsFile: a journal with bytes that are not frames
// before its end stops the replay with an error naming it, and stays.
func TestReplayCorruptKeepsFile(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	w, err := j.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	w.Append(1, sigsOf(1, 2), make([]bool, 2))
	w.Append(2, sigsOf(3), make([]bool, 1))
	if err := w.Close(false); err != nil {
		t.Fatal(err)
	}
	path := logs(t, dir)[0]
	b, _ := os.ReadFile(path)
	b[HeaderSize+FrameHeaderSize+3] ^= 0xff // inside the first frame, another follows
	os.WriteFile(path, b, 0o644)
	_, err = j.Replay(func([]signature.Signature) error { return nil }, func() error { return nil }, nil)
	if !errors.Is(err, ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte(filepath.Base(path))) {
		t.Fatalf("Replay = %v, want ErrCorrupt naming the file", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the corrupt journal was removed: %v", err)
	}
}

// TestReplayTempFiles: a file a writer was starting (still under its
// temporary name) is left alone while it is young, since its writer may
// not have locked it yet, and removed once old.
func TestReplayTempFiles(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir)
	w, err := j.NewWriter() // makes the directory
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(true)
	young := filepath.Join(dir, Dir, ".1-2-0.log.tmp")
	old := filepath.Join(dir, Dir, ".3-4-0.log.tmp")
	for _, p := range []string{young, old} {
		if err := os.WriteFile(p, header(testID), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * tempAge)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	replayAll(t, j)
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a young temporary file was removed: %v", err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an old temporary file stayed: %v", err)
	}
}
