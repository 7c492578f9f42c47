package dedupproto_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/urldedupd/urldedupd/internal/dedupproto"
)

// FuzzDecode: any bytes decode to a frame or to an error wrapping
// ErrMalformed, never a panic; a frame decoded writes back to bytes that
// decode to the same frame.
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
