package resp_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/urldedupd/urldedupd/internal/resp"
)

// FuzzReader: whatever the input, the Reader never panics, keeps to its
// limits, returns the same commands and error whether the input comes at
// once or one byte at a time, and gives back all it charged; and every
// command it returns, written out again as a multibulk, reads back the
// same. Seeds: testdata/fuzz/FuzzReader and the cases of reader.txt.
func FuzzReader(f *testing.F) {
	for _, c := range readCases(f) {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		lim := testLimits
		bg := &budget{limit: 1 << 20}
		whole, werr := readAll(bytes.NewReader(in), &lim, bg)
		if bg.used != 0 {
			t.Fatalf("%d bytes still charged after Release", bg.used)
		}
		bytewise, berr := readAll(iotest.OneByteReader(bytes.NewReader(in)), &lim, nil)
		if fmt.Sprint(whole) != fmt.Sprint(bytewise) || errText(werr) != errText(berr) {
			t.Fatalf("whole: %q, %v\nbytewise: %q, %v", whole, werr, bytewise, berr)
		}
		if werr == nil || !errors.Is(werr, resp.ErrProtocol) && werr != io.EOF && werr != io.ErrUnexpectedEOF {
			t.Fatalf("error %v", werr)
		}
		r := resp.NewReader(bytes.NewReader(in), &lim, nil)
		for {
			cmds, err := r.ReadCommands()
			if err != nil {
				break
			}
			var out []byte
			for _, c := range cmds {
				if len(c.Args) == 0 || len(c.Args) > lim.MaxArgs {
					t.Fatalf("a command of %d arguments", len(c.Args))
				}
				out = fmt.Appendf(out, "*%d\r\n", len(c.Args))
				for _, a := range c.Args {
					if len(a) > lim.MaxBulk {
						t.Fatalf("an argument of %d bytes", len(a))
					}
					out = fmt.Appendf(out, "$%d\r\n%s\r\n", len(a), a)
				}
			}
			again, err := readAll(bytes.NewReader(out), &resp.Limits{}, nil)
			if err != io.EOF || len(again) != len(cmds) {
				t.Fatalf("written out again, %d commands read back as %d (%v)", len(cmds), len(again), err)
			}
			for i, c := range cmds {
				if again[i] != show(c.Args) {
					t.Fatalf("command %d: %s read back as %s", i, show(c.Args), again[i])
				}
			}
		}
	})
}
