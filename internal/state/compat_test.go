package state_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// TestCompat opens, with this build, a state of each layout written by an
// earlier build (testdata/compat, made by scripts/make-layout-compat.sh
// with the binary of the commit in testdata/compat/COMMIT), and checks
// that it answers a list of URLs as that build did, a dry run first and
// then recording, and that every file of the state is afterwards byte for
// byte what that build left.
func TestCompat(t *testing.T) {
	const dir = "testdata/compat"
	query := lines(t, filepath.Join(dir, "query.txt"))
	for _, layout := range []string{"bitmap", "keyed", "bloom", "mdbf", "dsbf"} {
		t.Run(layout, func(t *testing.T) {
			where := filepath.Join(t.TempDir(), "state")
			unpack(t, filepath.Join(dir, layout+".pages.gz"), where)
			ctx := context.Background()

			ro, err := state.Open(ctx, where, &state.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := ro.Meta().Spec.Layout.Name(); got != layout {
				t.Errorf("layout %q, want %q", got, layout)
			}
			check := answer(t, ro, query, true)
			if err := ro.Close(); err != nil {
				t.Fatal(err)
			}
			same(t, "check", check, lines(t, filepath.Join(dir, layout+".check")))

			st, err := state.Open(ctx, where, nil)
			if err != nil {
				t.Fatal(err)
			}
			mark := answer(t, st, query, false)
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			same(t, "filter --mark", mark, lines(t, filepath.Join(dir, layout+".mark")))

			same(t, "files after", hashes(t, where), lines(t, filepath.Join(dir, layout+".after.sha256")))
		})
	}
}

// answer decides urls on st in one batch, as filter and check do, and
// returns "new" or "dup" for each.
func answer(t *testing.T, st *state.State, urls []string, dryRun bool) []string {
	t.Helper()
	signer := st.Signer()
	sigs := make([]signature.Signature, len(urls))
	for i, u := range urls {
		var ok bool
		if sigs[i], ok = signer.Sign([]byte(u)); !ok {
			t.Fatalf("%q does not sign", u)
		}
	}
	seen := make([]bool, len(sigs))
	if err := st.Decide(context.Background(), sigs, seen, dryRun); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(seen))
	for i, s := range seen {
		out[i] = map[bool]string{false: "new", true: "dup"}[s]
	}
	return out
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d lines, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if got[i] != want[i] {
			if bad++; bad <= 5 {
				t.Errorf("%s: line %d: %q, want %q", what, i+1, got[i], want[i])
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d lines differ in all", what, bad)
	}
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// hashes returns sha256sum's lines for every file of dir, by name.
func hashes(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%x  %s", h.Sum(nil), e.Name()))
	}
	sort.Slice(out, func(i, j int) bool { return out[i][66:] < out[j][66:] })
	return out
}

// unpack restores into dir (made mode 0700) the files packed by
// scripts/statepack: each at its size, sparse, with its non-zero pages
// written, and the modes a state has (0600 for the key, 0644 else).
func unpack(t *testing.T, packed, dir string) {
	t.Helper()
	f, err := os.Open(packed)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(zr)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	read := func(v any) error { return binary.Read(r, binary.BigEndian, v) }
	for {
		var nameLen uint16
		if err := read(&nameLen); err == io.EOF {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		name := make([]byte, nameLen)
		var size uint64
		var pages uint32
		if _, err := io.ReadFull(r, name); err != nil || read(&size) != nil || read(&pages) != nil {
			t.Fatalf("%s: truncated", packed)
		}
		mode := os.FileMode(0o644)
		if bytes.Contains(name, []byte("key")) {
			mode = 0o600
		}
		out, err := os.OpenFile(filepath.Join(dir, string(name)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Truncate(int64(size)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		for range pages {
			var off uint64
			if err := read(&off); err != nil {
				t.Fatal(err)
			}
			p := buf[:min(4096, size-off)]
			if _, err := io.ReadFull(r, p); err != nil {
				t.Fatal(err)
			}
			if _, err := out.WriteAt(p, int64(off)); err != nil {
				t.Fatal(err)
			}
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
