package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// compare on a file and on synthetic URLs: a table or JSON naming every
// layout asked, progress on stderr, usage mistakes exit 2.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	var in, held strings.Builder
	for i := range 5000 {
		in.WriteString("http://in.example/" + strings.Repeat("x", i%7) + "/" + strconv.Itoa(i) + "\n")
		held.WriteString("http://held.example/" + strconv.Itoa(i) + "\n")
	}
	urls, heldOut := filepath.Join(dir, "in.txt"), filepath.Join(dir, "held.txt")
	os.WriteFile(urls, []byte(in.String()+in.String()), 0o644) // every URL twice
	os.WriteFile(heldOut, []byte(held.String()), 0o644)
	out, stderr, code := run(t, nil, "compare", "--urls", urls, "--held-out", heldOut, "--memory", "8KiB", "--layouts", "bloom-patent,hashtable,exact", "--json")
	var res []struct {
		Layout   string                        `json:"layout"`
		Inserted uint64                        `json:"inserted"`
		FalseDup struct{ Hits, Trials uint64 } `json:"false_dup"`
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || len(res) != 3 {
		t.Fatalf("compare --json: %d %v\n%s\n%s", code, err, out, stderr)
	}
	for _, r := range res {
		if r.Inserted != 5000 || r.FalseDup.Trials != 5000 {
			t.Errorf("%s: %d distinct inserted, %d held-out queried; want 5000 and 5000", r.Layout, r.Inserted, r.FalseDup.Trials)
		}
		if (r.Layout == "exact") != (r.FalseDup.Hits == 0) {
			t.Errorf("%s: %d false duplicates", r.Layout, r.FalseDup.Hits)
		}
	}
	if !strings.Contains(stderr, "compare: hashtable: inserting") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	out, _, code = run(t, nil, "compare", "--synthetic", "3000", "--memory", "8KiB", "--layouts", "dsbf,mdbf")
	if code != 0 || !strings.Contains(out, "false dup [95% CI]") || !strings.Contains(out, "dsbf") || !strings.Contains(out, "mdbf") {
		t.Fatalf("compare table: %d\n%s", code, out)
	}
	svg := filepath.Join(dir, "rates.svg")
	if _, stderr, code := run(t, nil, "compare", "--synthetic", "20000", "--memory", "8KiB", "--layouts", "bloom-patent,hashtable", "--plot", svg); code != 0 {
		t.Fatalf("compare --plot: %d %s", code, stderr)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "hashtable measured") {
		t.Errorf("plot %s: %v", svg, err)
	}
	for _, args := range [][]string{
		{"compare", "--synthetic", "10", "--plot", "x.gif"},
		{"compare"},
		{"compare", "--synthetic", "10", "--urls", urls},
		{"compare", "--synthetic", "10", "--layouts", "nope"},
		{"compare", "--synthetic", "10", "--memory", "lots"},
	} {
		if _, stderr, code := run(t, nil, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}
