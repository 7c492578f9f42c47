package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func urlLines(prefix string, from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "http://%s.example/page/%d\n", prefix, i)
	}
	return b.String()
}

// filterInto records input in the state at dir, or, when dir is "", in
// the state the extra flags name.
func filterInto(t *testing.T, dir, input string, extra ...string) {
	t.Helper()
	var args []string
	if dir != "" {
		args = []string{"--dir", dir}
	}
	args = append(args, extra...)
	if extra == nil {
		args = append(args, "filter")
	}
	if _, stderr, code := run(t, strings.NewReader(input), args...); code != 0 {
		t.Fatalf("%v: %d %s", args, code, stderr)
	}
}

// marks returns filter --dry-run --mark's verdicts for input against dir.
func marks(t *testing.T, dir, input string) (nNew, nDup int) {
	out, stderr, code := run(t, strings.NewReader(input), "--dir", dir, "filter", "--dry-run", "--mark")
	if code != 0 {
		t.Fatalf("dry run on %s: %d %s", dir, code, stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "new\t") {
			nNew++
		} else {
			nDup++
		}
	}
	return nNew, nDup
}

func TestMerge(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	a, b, c := filepath.Join(tmp, "a"), filepath.Join(tmp, "b"), filepath.Join(tmp, "c")
	filterInto(t, a, urlLines("shared", 0, 500)+urlLines("a", 0, 1000))
	filterInto(t, b, urlLines("shared", 0, 500)+urlLines("b", 0, 700))

	out, stderr, code := run(t, nil, "merge", "--into", c, a, b)
	if code != 0 || !strings.Contains(out, a+": 1500 bits added") || !strings.Contains(out, b+": 700 bits added") {
		t.Fatalf("merge into new: %d %q %q", code, out, stderr)
	}
	union := urlLines("shared", 0, 500) + urlLines("a", 0, 1000) + urlLines("b", 0, 700)
	if n, d := marks(t, c, union); n != 0 || d != 2200 {
		t.Fatalf("merged state: %d new, %d dup of the union", n, d)
	}
	if n, _ := marks(t, c, urlLines("never", 0, 100)); n != 100 {
		t.Fatalf("merged state claims %d unseen URLs", 100-n)
	}
	// Into an existing state: only what it lacks is added.
	out, _, code = run(t, nil, "merge", "--into", a, b)
	if code != 0 || !strings.Contains(out, ": 700 bits added") {
		t.Fatalf("merge into a: %d %q", code, out)
	}

	// A state with another normalization is refused; nothing changes.
	other := filepath.Join(tmp, "other")
	if _, stderr, code := run(t, nil, "--dir", other, "init", "--normalize", "none"); code != 0 {
		t.Fatal(stderr)
	}
	before := sums(t, c)
	_, stderr, code = run(t, nil, "merge", "--into", c, other)
	if code != 3 || !strings.Contains(stderr, "state format differs") || !strings.Contains(stderr, other) {
		t.Fatalf("mismatched merge: %d %q", code, stderr)
	}
	if sums(t, c) != before {
		t.Fatal("a refused merge changed the destination")
	}
}

// A snapshot taken while a filter writes: every URL recorded before it
// started is in it, and it holds no bit the source never had.
func TestSnapshotWhileWriting(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	src, snap := filepath.Join(tmp, "src"), filepath.Join(tmp, "snap")
	before := urlLines("before", 0, 20000)
	filterInto(t, src, before)
	during := filepath.Join(tmp, "during.txt")
	os.WriteFile(during, []byte(urlLines("during", 0, 1_000_000)), 0o644)
	writer := exec.Command(binary, "--dir", src, "filter", during)
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, nil, "--dir", src, "snapshot", snap)
	if err := writer.Wait(); err != nil {
		t.Fatalf("writer: %v", err)
	}
	if code != 0 || !strings.Contains(out, "written to "+snap) {
		t.Fatalf("snapshot: %d %q %q", code, out, stderr)
	}
	if n, d := marks(t, snap, before); n != 0 || d != 20000 {
		t.Fatalf("snapshot lacks URLs recorded before it: %d new", n)
	}
	out, _, code = run(t, nil, "merge", "--into", src, snap)
	if code != 0 || !strings.Contains(out, ": 0 bits added") {
		t.Fatalf("snapshot holds bits the source lacks: %q", out)
	}
	if _, stderr, code := run(t, nil, "--dir", src, "snapshot", snap); code == 0 || !strings.Contains(stderr, "destination exists") {
		t.Fatalf("snapshot over an existing dir: %d %q", code, stderr)
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".snapshot-") {
			t.Fatalf("temporary %s left behind", e.Name())
		}
	}
}
