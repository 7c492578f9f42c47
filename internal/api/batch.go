package api

import "github.com/urldedupd/urldedupd/internal/signature"

// Buffer reuse. A batch's buffers are kept for the next request only while
// they are small; a body over bigBody is mapped outside the Go heap and
// unmapped when its request ends, so that a burst of big uploads leaves no
// memory behind.
const (
	bigBody     = 1 << 20 // bodies larger than this are mapped, never pooled
	poolURLs    = 16384   // batches of more URLs drop their slices when done
	poolBatches = 16      // batches kept for reuse
)

// batch is the per-request scratch space.
type batch struct {
	signer  *signature.Signer
	body    []byte // the body read so far; within mapping when mapped
	mapping []byte // the mapped region holding a big body, or nil
	charged int64  // bytes of the server's budget this request holds
	urls    [][]byte
	sigs    []signature.Signature
	seen    []bool
	out     []byte
}

// pool is a bounded free list of batches.
type pool struct {
	free chan *batch
	new  func() *batch
}

func (p *pool) get() *batch {
	select {
	case b := <-p.free:
		return b
	default:
		return p.new()
	}
}

// put keeps b if there is room, with its big buffers dropped.
func (p *pool) put(b *batch) {
	b.unmap()
	if cap(b.urls) > poolURLs {
		b.urls, b.sigs, b.seen, b.out = nil, nil, nil, nil
	}
	b.urls, b.body = b.urls[:0], b.body[:0]
	select {
	case p.free <- b:
	default:
	}
}

// grow makes room for n body bytes, keeping what was read: on the Go heap
// up to bigBody, mapped above it.
func (b *batch) grow(n int) error {
	if n <= cap(b.body) {
		return nil
	}
	var nb []byte
	if n <= bigBody {
		nb = make([]byte, len(b.body), n)
	} else {
		m, err := mapBytes(n)
		if err != nil {
			return err
		}
		nb = m[:len(b.body)]
		copy(nb, b.body)
		b.unmap()
		b.mapping = m
		b.body = nb
		return nil
	}
	copy(nb, b.body)
	b.body = nb
	return nil
}

// unmap returns a mapped body to the system, first dropping every
// reference into it (the garbage collector must never find a pointer into
// memory that is no longer mapped).
func (b *batch) unmap() {
	if b.mapping == nil {
		return
	}
	clear(b.urls[:cap(b.urls)])
	b.urls = b.urls[:0]
	unmapBytes(b.mapping)
	b.mapping, b.body = nil, nil
}
