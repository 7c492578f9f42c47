package inflight

import (
	"context"
	"sync"

	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// A Window sends batches of signatures to a Decider with up to its depth in
// flight and returns their answers in order. Each batch carries a tag of
// type T, returned with its answers, by which the caller knows what the
// batch was. A Window is used by one goroutine; at a depth of 1 or more it
// runs its own.
//
// At depth 0 a Window answers at once: Send decides the batch in the
// calling goroutine, and the batch waits for its Recv (Ready is true at
// once); one batch is held at a time. That is the right depth for a local
// state, whose answers cost less than a hand-over to another goroutine,
// and it lets a caller have one loop for every state.
type Window[T any] struct {
	d      layout.Decider
	ctx    context.Context
	dryRun bool
	atOnce bool // depth 0: Send decides in the caller's goroutine

	slots []slot[T]
	head  int // oldest batch in flight
	n     int // batches in flight
	work  chan *slot[T]
	wg    sync.WaitGroup
	owner map[signature.Signature]struct{} // signatures sent and not yet received

	// Stats count signatures.
	Stats Stats
}

// Stats count where a Window's answers came from.
type Stats struct {
	Sent     uint64 // sent to the Decider
	Repeated uint64 // answered as repeats of a signature in flight
}

// StatsCounters describes Stats' counters (internal/counter).
var StatsCounters = counter.Table[Stats]{
	{Name: "sent", Help: "Signatures sent to the Decider", Field: func(s *Stats) *uint64 { return &s.Sent }},
	{Name: "repeated", Help: "Signatures answered as repeats of one in flight", Field: func(s *Stats) *uint64 { return &s.Repeated }},
}

type slot[T any] struct {
	tag  T
	sigs []signature.Signature
	seen []bool

	idx  []int                 // index in sigs of each signature sent
	sub  []signature.Signature // the signatures sent
	ans  []bool                // their answers
	err  error
	done chan struct{}
}

// NewWindow returns a Window of the given depth over d: 0 (or less)
// answers at once, in Send; 1 or more keeps that many batches in flight,
// each decided in a goroutine of the Window's. Its batches are decided
// with ctx, and only tested when dryRun. Close it to stop its goroutines.
func NewWindow[T any](ctx context.Context, d layout.Decider, depth int, dryRun bool) *Window[T] {
	if depth <= 0 {
		w := &Window[T]{d: d, ctx: ctx, dryRun: dryRun, atOnce: true, slots: make([]slot[T], 1)}
		w.slots[0].done = make(chan struct{}, 1)
		return w
	}
	w := &Window[T]{d: d, ctx: ctx, dryRun: dryRun, slots: make([]slot[T], depth),
		work: make(chan *slot[T], depth), owner: make(map[signature.Signature]struct{}, 1024)}
	for i := range w.slots {
		w.slots[i].done = make(chan struct{}, 1)
	}
	w.wg.Add(depth)
	for range depth {
		go w.worker()
	}
	return w
}

func (w *Window[T]) worker() {
	defer w.wg.Done()
	for s := range w.work {
		s.err = w.d.Decide(w.ctx, s.sub, s.ans, w.dryRun)
		s.done <- struct{}{}
	}
}

// Depth returns the window's depth: 0 when it answers at once.
func (w *Window[T]) Depth() int {
	if w.atOnce {
		return 0
	}
	return len(w.slots)
}

// Len returns the number of batches in flight.
func (w *Window[T]) Len() int { return w.n }

// Full reports whether depth batches are in flight: Recv must come before
// the next Send.
func (w *Window[T]) Full() bool { return w.n == len(w.slots) }

// Ready reports whether the oldest batch in flight has its answers, so
// that Recv would not wait.
func (w *Window[T]) Ready() bool { return w.n > 0 && len(w.slots[w.head].done) > 0 }

// Send starts deciding sigs into seen, which the caller must leave alone
// until Recv returns the batch. It panics when the window is full.
func (w *Window[T]) Send(sigs []signature.Signature, seen []bool, tag T) {
	if w.Full() {
		panic("inflight: Send on a full Window")
	}
	s := &w.slots[(w.head+w.n)%len(w.slots)]
	w.n++
	s.tag, s.sigs, s.seen, s.err = tag, sigs, seen, nil
	if w.atOnce {
		// One caller deciding in turn: the state's own answers are those
		// of a sequential client, repeats within the batch included.
		s.err = w.d.Decide(w.ctx, sigs, seen, w.dryRun)
		w.Stats.Sent += uint64(len(sigs))
		s.done <- struct{}{}
		return
	}
	s.idx, s.sub = s.idx[:0], s.sub[:0]
	for i, sig := range sigs {
		if !w.dryRun {
			if _, ok := w.owner[sig]; ok {
				seen[i] = true // its first occurrence, in flight, sets it
				continue
			}
			w.owner[sig] = struct{}{}
		}
		s.idx = append(s.idx, i)
		s.sub = append(s.sub, sig)
	}
	w.Stats.Sent += uint64(len(s.sub))
	w.Stats.Repeated += uint64(len(sigs) - len(s.sub))
	if cap(s.ans) < len(s.sub) {
		s.ans = make([]bool, len(s.sub))
	}
	s.ans = s.ans[:len(s.sub)]
	if len(s.sub) == 0 {
		s.done <- struct{}{}
		return
	}
	w.work <- s
}

// Recv waits for the oldest batch in flight and returns its tag and error;
// on success its seen slice holds the answers. It panics when nothing is in
// flight.
func (w *Window[T]) Recv() (T, error) {
	if w.n == 0 {
		panic("inflight: Recv on an empty Window")
	}
	s := &w.slots[w.head]
	<-s.done
	w.head = (w.head + 1) % len(w.slots)
	w.n--
	if w.atOnce {
		tag := s.tag
		var zero T
		s.tag, s.sigs, s.seen = zero, nil, nil
		return tag, s.err
	}
	if !w.dryRun {
		for _, sig := range s.sub {
			delete(w.owner, sig)
		}
	}
	if s.err == nil {
		for k, i := range s.idx {
			s.seen[i] = s.ans[k]
		}
	}
	tag := s.tag
	var zero T
	s.tag, s.sigs, s.seen = zero, nil, nil
	return tag, s.err
}

// Close waits for the batches in flight, discards their answers and stops
// the Window's goroutines.
func (w *Window[T]) Close() {
	for w.n > 0 {
		w.Recv()
	}
	if w.atOnce {
		return
	}
	close(w.work)
	w.wg.Wait()
}
