package frontend

import (
	"sync"
	"sync/atomic"
)

// Budget counts the bytes that requests hold across a front end (bodies,
// commands' arguments, and what their URLs cost), under a hard limit. A
// fifth of it is kept in equal shares, one for each connection (a front
// end that serves one request at a time on a connection, as HTTP/1.1 and
// RESP do): the first Share bytes a request holds are its own, which no
// other request can take. What requests hold beyond their shares comes
// from the other four fifths, the pool, first come first served. So
// stalled uploads, however many, fill at most the pool and their own
// shares, and a small request (one within its share) is answered at once.
// The whole is still a hard cap, should more requests than connections be
// served at once.
//
// A request keeps the count of what it holds itself (held) and passes it
// to Take and Give. A Budget is safe for concurrent use.
type Budget struct {
	limit int64 // all of it
	share int64 // what a request may hold outside the pool
	pool  int64 // what requests hold beyond their shares, together

	mu     sync.Mutex
	pooled int64        // held in the pool; guarded by mu
	used   atomic.Int64 // held in all; changed under mu
}

// NewBudget returns a Budget of limit bytes with a share kept for each of
// conns connections (at least 1).
func NewBudget(limit int64, conns int) *Budget {
	conns = max(conns, 1)
	return &Budget{limit: limit, share: limit / 5 / int64(conns), pool: limit - limit/5}
}

// Limit is the whole budget.
func (bg *Budget) Limit() int64 { return bg.limit }

// Share is what a request holds outside the pool: its own.
func (bg *Budget) Share() int64 { return bg.share }

// Pool is what requests hold beyond their shares, together, at most.
func (bg *Budget) Pool() int64 { return bg.pool }

// Most is the most one request may hold: its share and all of the pool.
func (bg *Budget) Most() int64 { return bg.share + bg.pool }

// Used is how much requests hold now.
func (bg *Budget) Used() int64 { return bg.used.Load() }

// inPool is how much of a change of n bytes (negative: given back) to a
// request holding held falls in the pool.
func (bg *Budget) inPool(held, n int64) int64 {
	return max(held+n-bg.share, 0) - max(held-bg.share, 0)
}

// Take takes n bytes for a request holding held, and reports whether they
// fit.
func (bg *Budget) Take(held, n int64) bool {
	p := bg.inPool(held, n)
	bg.mu.Lock()
	defer bg.mu.Unlock()
	u := bg.used.Load()
	if u+n > bg.limit || bg.pooled+p > bg.pool {
		return false
	}
	bg.used.Store(u + n)
	bg.pooled += p
	return true
}

// Give gives back n of the bytes a request holding held holds.
func (bg *Budget) Give(held, n int64) {
	p := bg.inPool(held, -n)
	bg.mu.Lock()
	bg.used.Add(-n)
	bg.pooled += p
	bg.mu.Unlock()
}
