package h2c

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The client streams in testdata were recorded from real clients and
// servers by scripts/make-h2c-captures.sh: curl (libnghttp2's encoder,
// Huffman) and nghttp (several requests on one connection, so later
// requests' fields come from the dynamic table; PADDED and PRIORITY
// HEADERS; a 30 kB header split into CONTINUATION frames) against nghttpd
// and a Go h2c server, and curl's "Upgrade: h2c". Each NAME.want lists the
// requests the connection carried: "STREAM METHOD SCHEME AUTHORITY PATH".

// recording is one recorded client stream and what it must yield.
type recording struct {
	name  string
	start Start
	data  []byte // from the preface on
	want  []string
}

func recordings(t testing.TB) []recording {
	t.Helper()
	names, err := filepath.Glob("testdata/*.client")
	if err != nil || len(names) == 0 {
		t.Fatalf("no recorded client streams in testdata: %v", err)
	}
	var recs []recording
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(name, ".client") + ".want")
		if err != nil {
			t.Fatal(err)
		}
		r := recording{name: filepath.Base(name), want: strings.Split(strings.TrimSpace(string(want)), "\n")}
		// After an Upgrade the HTTP/1.1 request comes first; the capture
		// package hands the decoder what follows the server's 101.
		if strings.Contains(r.name, "upgrade") {
			r.start = Upgraded
			i := bytes.Index(data, []byte(Preface))
			if i <= 0 {
				t.Fatalf("%s: no preface after the upgrade request", name)
			}
			data = data[i:]
		}
		r.data = data
		recs = append(recs, r)
	}
	return recs
}

func line(r *Request) string {
	return fmt.Sprintf("%d %s %s %s %s", r.StreamID, r.Method, r.Scheme, r.Authority, r.Path)
}

// decodePieces feeds data cut at the given lengths (the rest in one piece).
func decodePieces(t testing.TB, start Start, data []byte, cut func() int) ([]string, error) {
	t.Helper()
	d := NewDecoder(start)
	var got []string
	emit := func(r *Request) { got = append(got, line(r)) }
	for len(data) > 0 {
		n := min(cut(), len(data))
		if err := d.Feed(data[:n], emit); err != nil {
			return got, err
		}
		data = data[n:]
	}
	return got, nil
}

func TestRecorded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cuts := []struct {
		name string
		cut  func() int
	}{
		{"whole", func() int { return 1 << 30 }},
		{"bytes", func() int { return 1 }},
		{"segments", func() int { return 1448 }},
		{"random", func() int { return 1 + rng.IntN(40) }},
	}
	for _, rec := range recordings(t) {
		for _, c := range cuts {
			t.Run(rec.name+"/"+c.name, func(t *testing.T) {
				got, err := decodePieces(t, rec.start, rec.data, c.cut)
				if err != nil {
					t.Fatalf("error %v after %q", err, got)
				}
				if strings.Join(got, "\n") != strings.Join(rec.want, "\n") {
					t.Errorf("requests\n got %q\nwant %q", got, rec.want)
				}
			})
		}
	}
}

// The recordings hold what this package is for: check that they do
// exercise the dynamic table, Huffman strings, padding and CONTINUATION,
// so that TestRecorded cannot pass on easy bytes.
func TestRecordedCoverage(t *testing.T) {
	var seen struct{ indexedDyn, huffman, padded, priority, continuation, dataFrames bool }
	for _, rec := range recordings(t) {
		// The first request's path cannot come from the dynamic table:
		// when it is not in the bytes as sent, it was Huffman-coded.
		if path := strings.Fields(rec.want[0])[4]; !bytes.Contains(rec.data, []byte(path)) {
			seen.huffman = true
		}
		b := rec.data[len(Preface):]
		for len(b) >= frameHeaderLen {
			n := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
			typ, flags := b[3], b[4]
			if len(b) < frameHeaderLen+n {
				break
			}
			p := b[frameHeaderLen : frameHeaderLen+n]
			switch typ {
			case 0:
				seen.dataFrames = true
			case frameContinuation:
				seen.continuation = true
			case frameHeaders:
				seen.padded = seen.padded || flags&flagPadded != 0
				seen.priority = seen.priority || flags&flagPriority != 0
				if flags&flagPadded != 0 {
					p = p[1 : len(p)-int(p[0])]
				}
				if flags&flagPriority != 0 {
					p = p[5:]
				}
				for _, c := range p {
					// An indexed field past the 61 static entries: the
					// first byte of 1xxxxxxx with index > 61 (or the
					// 7-bit prefix full).
					if c&0x80 != 0 && c&0x7f > 61 {
						seen.indexedDyn = true
					}
				}
			}
			b = b[frameHeaderLen+n:]
		}
	}
	t.Logf("recordings exercise: %+v", seen)
	if !seen.indexedDyn || !seen.huffman || !seen.padded || !seen.priority || !seen.continuation || !seen.dataFrames {
		t.Errorf("recordings miss a feature: %+v", seen)
	}
}
