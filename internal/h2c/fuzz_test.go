package h2c

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
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

// FuzzHPACK decodes header blocks with this package's HPACK decoder and
// with golang.org/x/net/http2/hpack's, as two requests on one
// connection (data cut in two at cut, the table kept between them): the
// same fields, and the same error or none.
func FuzzHPACK(f *testing.F) {
	c := newClient()
	c.enc.SetMaxDynamicTableSizeLimit(MaxTableSize)
	c.enc.SetMaxDynamicTableSize(600)
	b1 := c.block(append(get("h.example", "/one"), "x-a", "1", "x-b", strings.Repeat("b", 300))...)
	b2 := c.block(append(get("h.example", "/two"), "x-b", strings.Repeat("b", 300), "x-c", strings.Repeat("c", 200))...)
	f.Add(append(b1, b2...), uint16(len(b1)))
	for _, b := range [][]byte{
		{0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff}, // RFC 7541 C.4.1
		{0x3f, 0xe1, 0x1f, 0x40, 0x81, 0x1f, 0x81, 0x1f, 0xbe},
		{0x20, 0x40, 0x01, 'a', 0x01, 'b', 0xbe},
		append(append([]byte{0x3f, 0x11, 0x44, 0x01, '/', 0x40, 0x05}, ":path\x02/x"...), 0xbe, 0xbf),
	} {
		f.Add(b, uint16(len(b)/2))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		k := min(int(cut), len(data))
		blocks := [][]byte{data[:k], data[k:]}
		// This package's decoder.
		var conn []byte
		conn = append(conn, Preface...)
		for i, b := range blocks {
			conn = append(conn, raw(frameHeaders, flagEndHeaders, uint32(1+2*i), b)...)
		}
		var got []string
		d := NewDecoder(PriorKnowledge)
		err := d.Feed(conn, func(r *Request) { got = append(got, line(r)) })
		// hpack's, keeping the same fields.
		var want []string
		var werr error
		h := hpack.NewDecoder(defaultTableSize, nil)
		h.SetAllowedMaxDynamicTableSize(MaxTableSize)
		h.SetMaxStringLength(MaxHeaderBlock)
		for i, b := range blocks {
			var fs fields
			h.SetEmitFunc(func(hf hpack.HeaderField) {
				if werr == nil {
					kd := &Decoder{limit: 1 << 30}
					kd.fields = fs
					kd.keep([]byte(hf.Name), []byte(hf.Value))
					fs = kd.fields
				}
			})
			if _, werr = h.Write(b); werr == nil {
				werr = h.Close()
			}
			if werr != nil {
				break
			}
			r := Request{StreamID: uint32(1 + 2*i), Method: fs.get(fMethod), Scheme: fs.get(fScheme), Authority: fs.get(fAuthority), Path: fs.get(fPath)}
			if len(r.Authority) == 0 {
				r.Authority = fs.get(fHost)
			}
			want = append(want, line(&r))
		}
		wantClass := error(nil)
		switch {
		case werr == nil:
		case errors.Is(werr, hpack.ErrStringLength):
			wantClass = ErrHeaderBlock
		case strings.Contains(werr.Error(), "dynamic table size update too large"):
			wantClass = ErrTableSize
		default:
			wantClass = ErrHPACK
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") || errClass(err) != wantClass {
			t.Fatalf("blocks %x:\n got %q %v\nwant %q %v", blocks, got, err, want, werr)
		}
	})
}
