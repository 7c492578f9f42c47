package api

import "testing"

// The pool keeps at most poolBatches batches; a batch that held a mapped
// body or over poolURLs URLs comes back without those buffers.
func TestPoolBounds(t *testing.T) {
	p := pool{free: make(chan *batch, poolBatches), new: func() *batch { return &batch{} }}
	var bs []*batch
	for range poolBatches + 4 {
		bs = append(bs, p.get())
	}
	for i, b := range bs {
		switch i {
		case 0: // a mapped body, and URLs pointing into it
			if err := b.grow(bigBody + 1); err != nil {
				t.Fatal(err)
			}
			b.body = append(b.body, "http://a/"...)
			b.urls = append(b.urls, b.body[:9])
		case 1: // a big batch
			b.urls = make([][]byte, poolURLs+1)
		case 2: // a small body on the heap is kept
			if err := b.grow(1000); err != nil {
				t.Fatal(err)
			}
		}
		p.put(b)
	}
	if len(p.free) != poolBatches {
		t.Fatalf("%d batches kept, want %d", len(p.free), poolBatches)
	}
	if b := bs[0]; b.mapping != nil || b.body != nil || b.urls[:1][0] != nil {
		t.Fatalf("mapped body kept: mapping %d bytes, body %d, URL %q", len(b.mapping), cap(b.body), b.urls[:1][0])
	}
	if cap(bs[1].urls) != 0 {
		t.Fatalf("big batch kept %d URL slots", cap(bs[1].urls))
	}
	if cap(bs[2].body) != 1000 {
		t.Fatalf("small body not kept: %d", cap(bs[2].body))
	}
}

// grow keeps what was read when a body moves from the heap to a mapping
// and from one mapping to a larger one.
func TestGrowKeepsBody(t *testing.T) {
	b := &batch{}
	want := []byte{}
	for _, n := range []int{100, 4096, bigBody, bigBody + 1, 3 * bigBody} {
		if err := b.grow(n); err != nil {
			t.Fatal(err)
		}
		if cap(b.body) < n || string(b.body) != string(want) {
			t.Fatalf("grow(%d): cap %d, %d bytes kept of %d", n, cap(b.body), len(b.body), len(want))
		}
		for len(b.body) < n {
			b.body = append(b.body, byte(len(b.body)))
			want = append(want, byte(len(want)))
		}
	}
	if b.mapping == nil {
		t.Fatal("a 3 MiB body is not mapped")
	}
	b.unmap()
}
