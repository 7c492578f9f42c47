package http1

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

var testServer = netip.MustParseAddrPort("192.0.2.1:8080")

// parse feeds stream to a new parser in pieces of the given sizes (0: all
// at once) and returns "METHOD URL" for each request, plus the error count.
func parse(stream string, piece int) ([]string, uint64) {
	p := newReqParser(1024)
	var got []string
	emit := func(r *request) {
		got = append(got, string(r.method)+" "+string(appendURL(nil, r, testServer)))
	}
	b := []byte(stream)
	if piece == 0 {
		piece = len(b) + 1
	}
	for len(b) > 0 {
		n := min(piece, len(b))
		p.feed(b[:n], emit)
		b = b[n:]
	}
	p.close(emit)
	return got, uint64(p.errors)
}

func TestParseRequests(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []string
		errors uint64
	}{
		{"simple", "GET /a?b=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n",
			[]string{"GET http://example.com/a?b=1"}, 0},
		{"host case and port kept", "GET / HTTP/1.1\r\nhOsT:   Example.com:8080  \r\n\r\n",
			[]string{"GET http://Example.com:8080/"}, 0},
		{"HTTP/1.0 without Host uses the server", "GET /x HTTP/1.0\r\n\r\n",
			[]string{"GET http://192.0.2.1:8080/x"}, 0},
		{"absolute-form", "GET http://proxy.example/p HTTP/1.1\r\nHost: other\r\n\r\n",
			[]string{"GET http://proxy.example/p"}, 0},
		{"authority-form", "CONNECT secure.example:443 HTTP/1.1\r\nHost: secure.example:443\r\n\r\n",
			[]string{"CONNECT secure.example:443"}, 0},
		{"asterisk-form", "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", []string{"OPTIONS http://h*"}, 0},
		{"any method token", "PROPFIND /dav HTTP/1.1\r\nHost: h\r\n\r\nBREW /pot HTTP/1.1\r\nHost: h\r\n\r\n",
			[]string{"PROPFIND http://h/dav", "BREW http://h/pot"}, 0},
		{"pipelined with bodies", "POST /1 HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nGET /fake\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n",
			[]string{"POST http://h/1", "GET http://h/2"}, 0},
		{"chunked body then request", "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" +
			"5\r\nGET /\r\n1a;ext=1\r\nGET /nope HTTP/1.1\r\n\r\nxxx\r\n0\r\nTrailer: x\r\n\r\nGET /after HTTP/1.1\r\nHost: h\r\n\r\n",
			[]string{"POST http://h/c", "GET http://h/after"}, 0},
		{"junk between requests is skipped, counted once", "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nhello\r\nworld\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n",
			[]string{"GET http://h/1", "GET http://h/2"}, 1},
		{"bare LF line ends", "GET /lf HTTP/1.1\nHost: h\n\n", []string{"GET http://h/lf"}, 0},
		{"not HTTP/1.x", "GET / HTTP/2.0\r\n\r\nGET / HTTP/3\r\n\r\n", nil, 1},
		{"headers never end: still reported", "GET /cut HTTP/1.1\r\nHost: h\r\nUser-Ag", []string{"GET http://h/cut"}, 0},
		{"over-long request line is junk", "GET /" + strings.Repeat("a", 2000) + " HTTP/1.1\r\nHost: h\r\n\r\nGET /ok HTTP/1.1\r\nHost: h\r\n\r\n",
			[]string{"GET http://h/ok"}, 1},
		{"over-long header is ignored", "GET /long-hdr HTTP/1.1\r\nCookie: " + strings.Repeat("c", 2000) + "\r\nHost: h\r\n\r\n",
			[]string{"GET http://h/long-hdr"}, 0},
		{"bad content-length", "POST /bad HTTP/1.1\r\nHost: h\r\nContent-Length: x\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n",
			[]string{"POST http://h/bad", "GET http://h/next"}, 1},
		{"first Host wins", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", []string{"GET http://a/"}, 0},
		{"userinfo is never recorded", "GET http://user:secret@proxy.example/p@q HTTP/1.1\r\nHost: other\r\n\r\n" +
			"GET /h HTTP/1.1\r\nHost: user:secret@h.example\r\n\r\n" +
			"CONNECT user:secret@tunnel.example:443 HTTP/1.1\r\n\r\n",
			[]string{"GET http://proxy.example/p@q", "GET http://h.example/h", "CONNECT tunnel.example:443"}, 0},
	}
	for _, tt := range tests {
		for _, piece := range []int{0, 1, 2, 3, 7, 64} {
			got, errs := parse(tt.stream, piece)
			if !reflect.DeepEqual(got, tt.want) || errs != tt.errors {
				t.Errorf("%s (pieces of %d): got %q, %d errors; want %q, %d", tt.name, piece, got, errs, tt.want, tt.errors)
			}
		}
	}
}

// After a gap the parser resynchronises at the next request line; inside a
// body of known length it just skips the lost bytes.
func TestParseGap(t *testing.T) {
	p := newReqParser(1024)
	var got []string
	emit := func(r *request) { got = append(got, string(r.target)) }
	p.feed([]byte("GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /lost-tail HT"), emit)
	p.gap(-1)
	p.feed([]byte("TP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n"), emit)
	p.feed([]byte("POST /3 HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n0123456789"), emit)
	p.gap(50)
	p.feed([]byte(strings.Repeat("z", 40)+"GET /4 HTTP/1.1\r\nHost: h\r\n\r\n"), emit)
	want := []string{"/1", "/2", "/3", "/4"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestParseAllocations(t *testing.T) {
	p := newReqParser(1024)
	data := []byte("GET /a HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: h\r\n\r\n")
	n := 0
	emit := func(r *request) { n++ }
	p.feed(data, emit)
	if a := testing.AllocsPerRun(1000, func() { p.feed(data, emit) }); a != 0 {
		t.Fatalf("%v allocations per feed", a)
	}
}

func FuzzParseRequests(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), uint8(3))
	f.Add([]byte("POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), uint8(1))
	f.Add([]byte("POST / HTTP/1.0\r\nContent-Length: 99999999999\r\n\r\n"), uint8(0))
	f.Add([]byte("\x04\x01\x1f\x90\x00\x00\x00\x01u\x00www.example.org\x00GET /p HTTP/1.0\r\n\r\n"), uint8(2))
	f.Add([]byte("\x05\x01\x02\x01\x04user\x06secret\x05\x01\x00\x03\x0bexample.net\x1f\x90GET /p HTTP/1.0\r\n\r\n"), uint8(4))
	f.Add([]byte("\x05\x01\x00\x05\x01\x00\x04\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x50GET /6 HTTP/1.0\r\n\r\n"), uint8(5))
	f.Add([]byte("CONNECT h:443 HTTP/1.1\r\n\r\n\x16\x03\x01\x00\x05hello"), uint8(6))
	f.Add([]byte("EHLO x\r\nMAIL FROM:<a@b>\r\n"), uint8(1))
	f.Add([]byte("SSH-2.0-x\r\n"), uint8(2))
	f.Add([]byte("a1 LOGIN u p\r\nGET / HTTP/1.1\r\n\r\n"), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, piece uint8) {
		all, statsAll := sniffParse(string(data), 0)
		split, statsSplit := sniffParse(string(data), int(piece%16)+1)
		if !reflect.DeepEqual(all, split) || statsAll != statsSplit {
			t.Fatalf("whole: %q %+v; in pieces of %d: %q %+v", all, statsAll, piece%16+1, split, statsSplit)
		}
	})
}
