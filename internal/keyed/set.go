package keyed

import (
	"context"
	"runtime/debug"
	"sync"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// Set decides batches of keyed signatures (signature.SipHash sums) on a
// Table: the keyed layout's counterpart of bitcheck.Set, in the form every
// state shares (layout.Decider). It is safe for concurrent use.
type Set struct {
	t     *Table
	fault func(r any) error
	pool  sync.Pool // *setScratch
}

type setScratch struct {
	locs []Loc
	res  []Result
}

// NewSet returns a Set over t. fault, when not nil, turns a value recovered
// from a memory fault inside t's memory (a shard file truncated under the
// process) into an error (shardfile.Dir.Fault); with it, Decide returns
// that error instead of the process dying of SIGBUS.
func NewSet(t *Table, fault func(r any) error) *Set {
	return &Set{t: t, fault: fault}
}

// Table returns the table the Set decides on.
func (s *Set) Table() *Table { return s.t }

// Decide decides sigs in order with Table.DecideBatch: seen[i] reports
// whether sigs[i] was found. A URL not stored because both its buckets are
// full is answered new (see Full) and counted in the Table's Counts. It
// fails only on a fault in the shard memory; nothing of the batch is then
// answered.
func (s *Set) Decide(_ context.Context, sigs []signature.Signature, seen []bool, dryRun bool) (err error) {
	if s.fault != nil {
		defer s.catch(debug.SetPanicOnFault(true), &err)
	}
	sc, _ := s.pool.Get().(*setScratch)
	if sc == nil {
		sc = &setScratch{}
	}
	defer s.pool.Put(sc)
	if cap(sc.locs) < len(sigs) {
		sc.locs, sc.res = make([]Loc, len(sigs)), make([]Result, len(sigs))
	}
	locs, res := sc.locs[:len(sigs)], sc.res[:len(sigs)]
	g := s.t.geo
	for i, sig := range sigs {
		locs[i] = g.Locate(uint64(sig))
	}
	s.t.DecideBatch(locs, res, dryRun)
	seen = seen[:len(sigs)]
	for i, r := range res {
		seen[i] = r == Dup
	}
	return nil
}

func (s *Set) catch(restore bool, errp *error) {
	debug.SetPanicOnFault(restore)
	r := recover()
	if r == nil {
		return
	}
	if err := s.fault(r); err != nil {
		*errp = err
		return
	}
	panic(r)
}
