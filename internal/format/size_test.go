package format_test

import (
	"testing"

	"github.com/urldedupd/urldedupd/internal/format"
)

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // 0: an error
	}{
		{"4096", 4096}, {"4096B", 4096}, {"512MiB", 512 << 20}, {"3GiB", 3 << 30}, {"1TiB", 1 << 40}, {" 2 KiB", 2 << 10},
		{"", 0}, {"0", 0}, {"-1MiB", 0}, {"1.5GiB", 0}, {"1GB", 0}, {"9999999TiB", 0}, {"MiB", 0},
	} {
		got, err := format.ParseBytes(tc.in)
		if tc.want == 0 && err == nil || tc.want != 0 && (err != nil || got != tc.want) {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

// FormatBytes writes the largest unit that divides the size, and
// ParseBytes reads back what it writes.
func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{512 << 20, "512MiB"}, {3 << 30, "3GiB"}, {1536 << 20, "1536MiB"}, {1 << 40, "1TiB"}, {4096, "4KiB"}, {4097, "4097B"}, {1, "1B"},
	} {
		got := format.FormatBytes(tc.in)
		back, err := format.ParseBytes(got)
		if got != tc.want || err != nil || back != tc.in {
			t.Errorf("FormatBytes(%d) = %q (read back %d, %v); want %q", tc.in, got, back, err, tc.want)
		}
	}
}
