package dedupproto_test

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/dedupproto"
)

// Every frame in testdata/good decodes, and writes back to the same bytes
// (less the file's last newline).
func TestDecodeGood(t *testing.T) {
	files, _ := filepath.Glob("testdata/good/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata/good/*.json")
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.TrimSuffix(string(b), "\n"))
		f, err := dedupproto.Decode(b, nil)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		out, err := f.Append(nil)
		if err != nil || string(out) != string(b) {
			t.Errorf("%s: written back as %s (%v)", file, out, err)
		}
	}
}

func TestDecode(t *testing.T) {
	f, err := dedupproto.Decode([]byte(` {"flag": 3, "number":"n1.h2.17", "ip":"fd00::2",
		"url_set": {"http://a/":0, "http://b/":1, "http://c/?q=\u00e9":0}} `), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &dedupproto.Frame{
		URLs:   []string{"http://a/", "http://b/", "http://c/?q=é"},
		Held:   []bool{false, true, false},
		IP:     netip.MustParseAddr("fd00::2"),
		Number: "n1.h2.17",
		Flag:   dedupproto.Answer,
	}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("got %+v\nwant %+v", f, want)
	}
	if f.IsHeld(0) || !f.IsHeld(1) || f.IsHeld(5) {
		t.Error("IsHeld")
	}
}

// Refused frames: each error wraps ErrMalformed and says what (and where,
// when the place is known).
func TestDecodeBad(t *testing.T) {
	long := strings.Repeat("a", 9000)
	for _, tt := range []struct{ name, in, want string }{
		{"empty", ``, "at byte 0: unexpected EOF"},
		{"not an object", `[1]`, `want "{", found [`},
		{"truncated", `{"url_set":{"http://a/":0`, "unexpected EOF"},
		{"after", `{"url_set":{},"ip":"10.0.0.1","number":"1","flag":1} {}`, "bytes after the frame"},
		{"unknown field", `{"url_set":{},"ip":"10.0.0.1","number":"1","flag":1,"x":1}`, `unknown field "x"`},
		{"field twice", `{"flag":1,"flag":2,"url_set":{},"ip":"10.0.0.1","number":"1"}`, `field "flag" twice`},
		{"no flag", `{"url_set":{},"ip":"10.0.0.1","number":"1"}`, "no flag"},
		{"no url_set", `{"ip":"10.0.0.1","number":"1","flag":1}`, "no url_set"},
		{"flag 4", `{"url_set":{},"ip":"10.0.0.1","number":"1","flag":4}`, "flag is the number 4, want 1, 2 or 3"},
		{"flag string", `{"url_set":{},"ip":"10.0.0.1","number":"1","flag":"1"}`, `flag is the string "1"`},
		{"flag 1.0", `{"url_set":{},"ip":"10.0.0.1","number":"1","flag":1.0}`, "flag is the number 1.0"},
		{"mark 2", `{"url_set":{"http://a/":2},"ip":"10.0.0.1","number":"1","flag":3}`, `"http://a/" is the number 2, want 0 or 1`},
		{"mark null", `{"url_set":{"http://a/":null},"ip":"10.0.0.1","number":"1","flag":3}`, "is null, want 0 or 1"},
		{"mark object", `{"url_set":{"http://a/":{}},"ip":"10.0.0.1","number":"1","flag":3}`, "want 0 or 1"},
		{"url twice", `{"url_set":{"http://a/":0,"http://a/":1},"ip":"10.0.0.1","number":"1","flag":3}`, `at byte 26: url_set: "http://a/" twice`},
		{"empty url", `{"url_set":{"":0},"ip":"10.0.0.1","number":"1","flag":1}`, "an empty URL"},
		{"long url", `{"url_set":{"` + long + `":0},"ip":"10.0.0.1","number":"1","flag":1}`, "a URL of 9000 bytes, over the limit of 8192"},
		{"bad ip", `{"url_set":{},"ip":"10.0.0.300","number":"1","flag":1}`, `ip "10.0.0.300" is not an IPv4 or IPv6 address`},
		{"ip zone", `{"url_set":{},"ip":"fe80::1%eth0","number":"1","flag":1}`, "is not an IPv4 or IPv6 address"},
		{"ip number", `{"url_set":{},"ip":167772161,"number":"1","flag":1}`, "ip is the number 167772161"},
		{"number empty", `{"url_set":{},"ip":"10.0.0.1","number":"","flag":1}`, "number is the string"},
		{"number space", `{"url_set":{},"ip":"10.0.0.1","number":"a b","flag":1}`, "printable ASCII"},
		{"number numeric", `{"url_set":{},"ip":"10.0.0.1","number":17,"flag":1}`, "number is the number 17"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dedupproto.Decode([]byte(tt.in), nil)
			if !errors.Is(err, dedupproto.ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("%v, want ErrMalformed saying %q", err, tt.want)
			}
		})
	}
}

// Every cap is reached.
func TestDecodeLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"url_set":{`)
	for i := range 11 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"http://x/` + strings.Repeat("y", i) + `":0`)
	}
	b.WriteString(`},"ip":"10.0.0.1","number":"1","flag":1}`)
	in := []byte(b.String())
	if _, err := dedupproto.Decode(in, &dedupproto.Limits{MaxURLs: 11}); err != nil {
		t.Fatalf("11 URLs at a cap of 11: %v", err)
	}
	for _, tt := range []struct {
		lim  dedupproto.Limits
		want string
	}{
		{dedupproto.Limits{MaxURLs: 10}, "more than 10 URLs"},
		{dedupproto.Limits{MaxURL: 18}, "a URL of 19 bytes, over the limit of 18"},
		{dedupproto.Limits{MaxBytes: len(in) - 1}, "over the limit of"},
	} {
		if _, err := dedupproto.Decode(in, &tt.lim); !errors.Is(err, dedupproto.ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.lim, err, tt.want)
		}
	}
	// The default URL cap, in a frame that Append refuses to write too.
	f := &dedupproto.Frame{URLs: make([]string, dedupproto.DefaultMaxURLs+1), IP: netip.MustParseAddr("10.0.0.1"), Number: "1", Flag: dedupproto.Submit}
	if _, err := f.Append(nil); !errors.Is(err, dedupproto.ErrMalformed) {
		t.Errorf("Append of %d URLs: %v", len(f.URLs), err)
	}
}

// Append refuses what Decode would refuse.
func TestAppendChecks(t *testing.T) {
	ok := dedupproto.Frame{URLs: []string{"http://a/"}, IP: netip.MustParseAddr("10.0.0.1"), Number: "n", Flag: dedupproto.Submit}
	for name, mutate := range map[string]func(f *dedupproto.Frame){
		"flag 0":    func(f *dedupproto.Frame) { f.Flag = 0 },
		"no ip":     func(f *dedupproto.Frame) { f.IP = netip.Addr{} },
		"no number": func(f *dedupproto.Frame) { f.Number = "" },
		"url twice": func(f *dedupproto.Frame) { f.URLs = []string{"http://a/", "http://a/"} },
		"empty url": func(f *dedupproto.Frame) { f.URLs = []string{""} },
		"marks":     func(f *dedupproto.Frame) { f.Held = []bool{true, true} },
	} {
		f := ok
		mutate(&f)
		if _, err := f.Append(nil); !errors.Is(err, dedupproto.ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ok.Append(nil); err != nil {
		t.Fatal(err)
	}
}
