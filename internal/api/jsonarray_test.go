package api

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitJSON(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{`["a","b"]`, []string{"a", "b"}, ""},
		{" \t\r\n[ \"a\" ,\n\"b\" ] \n", []string{"a", "b"}, ""},
		{`[]`, nil, ""},
		{`["\"\\\/\b\f\n\r\t"]`, []string{"\"\\/\b\f\n\r\t"}, ""},
		{`["\u00e9\u20AC\ud83d\ude00"]`, []string{"é€😀"}, ""},
		{`["\ud83d"]`, []string{"\uFFFD"}, ""},
		{`["\ud83d\u0041"]`, []string{"\uFFFDA"}, ""},
		{`["é"]`, []string{"é"}, ""},
		{`["a",null]`, nil, "URL 2 is null"},
		{`[null]`, nil, "URL 1 is null"},
		{`["a","b",""]`, nil, "URL 3 is empty"},
		{`["a",1]`, nil, "URL 2 is not a string"},
		{`["a",["b"]]`, nil, "URL 2 is not a string"},
		{`["a",nul]`, nil, "URL 2 is not a string"},
		{`null`, nil, "want ["},
		{``, nil, "want [ at the end"},
		{`{"a":"b"}`, nil, "want ["},
		{`["a"`, nil, "want , or ] at the end"},
		{`["a" "b"]`, nil, "want , or ] at byte 6"},
		{`["a",]`, nil, "URL 2 is not a string"},
		{`["a"]x`, nil, "data after the array at byte 6"},
		{`["a`, nil, "unterminated string"},
		{`["a\`, nil, "unterminated string"},
		{`["a\x"]`, nil, "bad escape"},
		{`["a\u12"]`, nil, `bad \u escape`},
		{"[\"a\tb\"]", nil, "control character"},
	}
	for _, tt := range tests {
		urls, err := splitJSON([]byte(tt.in), nil, 10)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || len(urls) != len(tt.want) {
			t.Errorf("%q: %q %v, want %q", tt.in, urls, err, tt.want)
			continue
		}
		for i := range urls {
			if string(urls[i]) != tt.want[i] {
				t.Errorf("%q: URL %d is %q, want %q", tt.in, i+1, urls[i], tt.want[i])
			}
		}
	}
}

// The parser stops after max+1 strings, before reading the rest.
func TestSplitJSONStopsOverMax(t *testing.T) {
	urls, err := splitJSON([]byte(`["a","b","c","d" garbage`), nil, 2)
	if err != nil || len(urls) != 3 {
		t.Fatalf("%q %v; want 3 URLs and no error", urls, err)
	}
}

func TestSplitJSONAllocs(t *testing.T) {
	in := []byte(`["http://a.example/\u00e9", "http://b.example/x\/y", "http://c.example/"]`)
	buf := make([]byte, len(in))
	urls := make([][]byte, 0, 8)
	n := testing.AllocsPerRun(100, func() {
		copy(buf, in)
		urls, _ = splitJSON(buf, urls[:0], 10)
	})
	if n != 0 || len(urls) != 3 {
		t.Fatalf("%v allocations, %d URLs", n, len(urls))
	}
}

// FuzzSplitJSON checks the in-place parser against encoding/json: it
// accepts exactly the arrays of non-empty strings encoding/json accepts,
// with the same strings.
func FuzzSplitJSON(f *testing.F) {
	for _, s := range []string{`["a","b"]`, `[null]`, `[""]`, `["\ud83d\ude00\u0041"]`, `["\ud800\ud800"]`, `[1]`, `[]`, ` ["x" ] `, `["a\"b\\c"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !utf8.Valid(in) {
			return
		}
		var ref []*string
		refErr := json.Unmarshal(in, &ref)
		refOK := refErr == nil && ref != nil
		for _, s := range ref {
			if s == nil || *s == "" {
				refOK = false
			}
		}
		body := append([]byte(nil), in...)
		urls, err := splitJSON(body, nil, 1<<30)
		if (err == nil) != refOK {
			t.Fatalf("%q: splitJSON error %v, encoding/json %v %v", in, err, refErr, ref)
		}
		if err != nil {
			return
		}
		if len(urls) != len(ref) {
			t.Fatalf("%q: %d URLs, encoding/json %d", in, len(urls), len(ref))
		}
		for i := range urls {
			if string(urls[i]) != *ref[i] {
				t.Fatalf("%q: URL %d is %q, encoding/json %q", in, i+1, urls[i], *ref[i])
			}
		}
	})
}
