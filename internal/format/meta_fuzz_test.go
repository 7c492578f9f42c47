package format_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
)

// FuzzMeta feeds the metadata parser arbitrary files: it never panics,
// every refusal is one of the documented sentinels, and whatever it
// accepts writes back to a file it reads as the same metadata.
func FuzzMeta(f *testing.F) {
	golden, err := os.ReadFile("testdata/meta-v1.golden")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	for _, l := range []string{"bloom", "mdbf", "dsbf"} { // the Bloom family's parameters
		b, err := os.ReadFile("testdata/meta-" + l + ".golden")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("urldedupd-state 1\nchecksum 00000000\n"))
	f.Add([]byte("\nchecksum "))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m format.Meta
		err := m.UnmarshalText(data)
		if err != nil {
			if !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, format.ErrVersion) && !errors.Is(err, format.ErrLayout) {
				t.Fatalf("error without a sentinel: %v", err)
			}
			return
		}
		out, err := m.MarshalText()
		if err != nil {
			t.Fatalf("accepted %q but cannot write it back: %v", data, err)
		}
		var again format.Meta
		if err := again.UnmarshalText(out); err != nil {
			t.Fatalf("accepted %q, wrote %q, which is refused: %v", data, out, err)
		}
		if !again.Created.Equal(m.Created.Truncate(time.Second)) || again.Spec != m.Spec || again.Sizes != m.Sizes || again.KeyID != m.KeyID {
			t.Fatalf("round trip changed %+v into %+v", m, again)
		}
	})
}
