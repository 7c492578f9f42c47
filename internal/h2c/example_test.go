package h2c_test

import (
	"fmt"

	"github.com/urldedupd/urldedupd/internal/h2c"
)

// A client's bytes, as a capture would see them in two TCP segments: the
// preface, an empty SETTINGS frame, and one HEADERS frame (HPACK: GET,
// http, :path "/", :authority "example.com" as a literal).
func Example() {
	segments := [][]byte{
		[]byte(h2c.Preface + "\x00\x00\x00\x04\x00\x00\x00\x00\x00" + "\x00\x00\x10\x01\x05\x00\x00\x00\x01"),
		[]byte("\x82\x86\x84\x41\x0bexample.com"),
	}
	d := h2c.NewDecoder(h2c.PriorKnowledge)
	for _, seg := range segments {
		err := d.Feed(seg, func(r *h2c.Request) {
			fmt.Printf("stream %d: %s %s://%s%s\n", r.StreamID, r.Method, r.Scheme, r.Authority, r.Path)
		})
		if err != nil {
			fmt.Println("given up:", err)
			return
		}
	}
	// Output: stream 1: GET http://example.com/
}
