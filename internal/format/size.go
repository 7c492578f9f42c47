package format

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseBytes reads a size as the command line gives one: bytes, or a whole
// number of KiB, MiB, GiB or TiB ("3GiB", "512MiB", "4096").
func ParseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}, {"", 0}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || n <= 0 || n > (1<<62)>>u.shift {
				return 0, fmt.Errorf("%q is not a size (bytes, or a whole number of KiB, MiB, GiB or TiB)", s)
			}
			return n << u.shift, nil
		}
	}
	return 0, fmt.Errorf("%q is not a size", s)
}

// FormatBytes writes a size as ParseBytes reads it, in the largest unit
// that divides it: "3GiB", "512MiB", "4097B".
func FormatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
