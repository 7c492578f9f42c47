package h2c

import (
	"errors"
	"strings"
	"testing"
)

// errClass is the sentinel an error wraps, for comparing two runs.
func errClass(err error) error {
	for _, s := range []error{ErrPreface, ErrFrame, ErrHPACK, ErrHeaderBlock, ErrTableSize} {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

// FuzzH2C feeds arbitrary client bytes, whole and cut in two at an
// arbitrary point: no panic, the same requests and the same error either
// way, and no request field longer than the cap. The seeds are the
// recorded client streams and the hand-made frames of TestHostile's
// kind; they run as an ordinary test.
func FuzzH2C(f *testing.F) {
	for _, rec := range recordings(f) {
		f.Add(rec.data, uint16(len(rec.data)/2), rec.start == Upgraded)
	}
	c := newClient()
	c.request(1, get("f.example", "/seed")...)
	c.fr.WriteData(1, true, []byte("data"))
	c.request(3, get("f.example", "/seed2")...)
	f.Add(c.out.Bytes(), uint16(30), false)
	for _, b := range [][]byte{
		raw(frameHeaders, flagEndHeaders|flagPadded|flagPriority, 1, []byte{3, 0, 0, 0, 0, 9, 0x82, 0x86, 0x84, 0, 0, 0}),
		raw(frameHeaders, 0, 1, []byte{0x3f, 0xe1, 0xff}),
		raw(frameContinuation, flagEndHeaders, 1, nil),
		raw(frameHeaders, flagEndHeaders, 1, []byte{0x40, 0x81, 0x1f, 0x81, 0x1f}),
	} {
		f.Add(append([]byte(Preface), b...), uint16(26), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, upgraded bool) {
		start := PriorKnowledge
		if upgraded {
			start = Upgraded
		}
		run := func(pieces ...[]byte) ([]string, error) {
			d := NewDecoder(start)
			var got []string
			var err error
			for _, p := range pieces {
				err = d.Feed(p, func(r *Request) {
					for _, f := range [][]byte{r.Method, r.Scheme, r.Authority, r.Path} {
						if len(f) > MaxHeaderBlock {
							t.Fatalf("a field of %d bytes", len(f))
						}
					}
					got = append(got, line(r))
				})
			}
			return got, err
		}
		whole, err := run(data)
		k := min(int(cut), len(data))
		split, err1 := run(data[:k], data[k:])
		if strings.Join(whole, "\n") != strings.Join(split, "\n") || errClass(err) != errClass(err1) {
			t.Fatalf("whole: %q %v; cut at %d: %q %v", whole, err, k, split, err1)
		}
	})
}
