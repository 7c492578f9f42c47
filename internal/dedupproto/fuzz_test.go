package dedupproto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/urldedupd/urldedupd/internal/dedupproto"
)

// FuzzDecode: any bytes decode to a frame or to an error wrapping
// ErrMalformed, never a panic; a frame decoded writes back to bytes that
// decode to the same frame; and encoding/json, reading the same bytes,
// finds them valid JSON with the same URLs and marks (Decode reads
// url_set by hand).
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/good/*.json")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Add([]byte(`{"url_set":{"a":0,"a":1},"ip":"::1","number":"1","flag":2}`))
	f.Add([]byte(`{"url_set":{"\ud800":0,"\ufffd":0},"ip":"::1","number":"1","flag":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := dedupproto.Decode(b, &dedupproto.Limits{MaxURLs: 64})
		if err != nil {
			if !errors.Is(err, dedupproto.ErrMalformed) {
				t.Fatalf("an error not wrapping ErrMalformed: %v", err)
			}
			return
		}
		var ref struct {
			URLSet map[string]json.Number `json:"url_set"`
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&ref); err != nil {
			t.Fatalf("%q decoded, but encoding/json refuses it: %v", b, err)
		}
		if len(ref.URLSet) != len(fr.URLs) {
			t.Fatalf("%q: %d URLs, encoding/json reads %d", b, len(fr.URLs), len(ref.URLSet))
		}
		for i, u := range fr.URLs {
			want := "0"
			if fr.IsHeld(i) {
				want = "1"
			}
			if got, ok := ref.URLSet[u]; !ok || string(got) != want {
				t.Fatalf("%q: URL %q marked %s, encoding/json reads %q (%v)", b, u, want, got, ok)
			}
		}
		out, err := fr.Append(nil)
		if err != nil {
			t.Fatalf("a decoded frame is not written back: %v", err)
		}
		again, err := dedupproto.Decode(out, nil)
		if err != nil || !reflect.DeepEqual(again, fr) {
			t.Fatalf("%q decoded as %+v, written as %q, decoded again as %+v (%v)", b, fr, out, again, err)
		}
	})
}
