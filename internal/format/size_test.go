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
