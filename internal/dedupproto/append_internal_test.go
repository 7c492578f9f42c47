package dedupproto

import (
	"encoding/json"
	"testing"
)

// appendString writes every string as encoding/json does.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"http://a.example/", "a\"b", `a\b`, "<&>", "\x7f", "\u2028", "\xff", "é", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q written %s, encoding/json writes %s", s, got, want)
		}
	})
}
