package window_test

import (
	"testing"

	"github.com/urldedupd/urldedupd/internal/window"
)

// ParseDuration reads what a user types after --window: it never panics,
// and what it accepts is written back by FormatDuration to the same
// duration.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30d", "1d12h", "90s", "24h", "d", "1d-2h", "99999d", "1.5h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := window.ParseDuration(s)
		if err != nil {
			return
		}
		back, err := window.ParseDuration(window.FormatDuration(d))
		if err != nil || back != d {
			t.Fatalf("%q = %v, written %q, read back %v %v", s, d, window.FormatDuration(d), back, err)
		}
	})
}
