package bloomlayout

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// ErrLayout is returned by New for metadata of a layout not of the Bloom
// family, or shards that do not match it.
var ErrLayout = errors.New("bloomlayout: not a Bloom-family state")

// filter is one of the three filters over the array.
type filter interface {
	// decide answers one URL: whether it was present; unless dry, it is
	// present afterwards. The caller holds the batch lock unless dry.
	decide(sig uint64, dry bool) bool
	// report fills in the layout's part of a Report.
	report(r *Report)
	// array is the bits it works on.
	array() array
}

// Set decides batches of signatures on a state of the Bloom family. It is
// safe for concurrent use, within a process and across processes.
type Set struct {
	meta  format.Meta
	l     filter
	mu    sync.Mutex // batches of this process, one at a time
	lk    *fileLock  // and of every process: nil for a read-only state
	fault func(r any) error
}

// Options say where New's Set takes its lock, and how it reports faults.
type Options struct {
	// LockPath is the file whose first byte Decide locks: shard 00 of the
	// state directory. Empty: no lock (a state in this process's memory
	// only, as in tests and compare).
	LockPath string
	// ReadOnly opens the lock file read-only: only dry runs can be made.
	ReadOnly bool
	// Fault, when not nil, turns a value recovered from a memory fault in
	// the shards (a shard file truncated under the process) into an error
	// (shardfile.Dir.Fault); Decide returns it instead of the process
	// dying of SIGBUS.
	Fault func(r any) error
}

// New returns a Set over the state of metadata m whose shards are given
// (256 of m's shard size, 8-byte aligned, as mapped by shardfile).
func New(m format.Meta, shards [][]byte, opts Options) (*Set, error) {
	if !m.Spec.Layout.Filter() {
		return nil, fmt.Errorf("%w: layout %s", ErrLayout, m.Spec.Layout)
	}
	if len(shards) != m.Sizes.Shards {
		return nil, fmt.Errorf("%w: %d shards, the metadata says %d", ErrLayout, len(shards), m.Sizes.Shards)
	}
	for i, s := range shards {
		if int64(len(s)) != m.Sizes.ShardBytes {
			return nil, fmt.Errorf("%w: shard %s has %d bytes, the metadata says %d", ErrLayout, format.ShardName(i), len(s), m.Sizes.ShardBytes)
		}
	}
	a := newArray(shards)
	s := &Set{meta: m, fault: opts.Fault}
	switch m.Spec.Layout {
	case format.Bloom:
		s.l = newBloom(a, m.Filter)
	case format.MDBF:
		s.l = newMDBF(a, m.Filter)
	case format.DSBF:
		s.l = newDSBF(a, m)
	}
	if opts.LockPath != "" {
		lk, err := openLock(opts.LockPath, opts.ReadOnly)
		if err != nil {
			return nil, err
		}
		s.lk = lk
	}
	return s, nil
}

// Close releases the lock file.
func (s *Set) Close() error {
	if s.lk == nil {
		return nil
	}
	return s.lk.Close()
}

// Decide decides sigs in order: seen[i] reports whether sigs[i] was
// present. Unless dryRun, it holds the batch lock throughout and every URL
// is present afterwards. It fails on a lock it cannot take, or a fault in
// the shard memory; nothing of the batch is then answered.
func (s *Set) Decide(_ context.Context, sigs []signature.Signature, seen []bool, dryRun bool) (err error) {
	if s.fault != nil {
		defer s.catch(debug.SetPanicOnFault(true), &err)
	}
	if !dryRun {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.lk != nil {
			if err := s.lk.Lock(); err != nil {
				return err
			}
			defer s.lk.Unlock()
		}
	}
	seen = seen[:len(sigs)]
	for i, sig := range sigs {
		seen[i] = s.l.decide(uint64(sig), dryRun)
	}
	return nil
}

// Exclusive runs fn holding the batch lock, as Decide does: no batch of
// any process runs meanwhile (merge copies a DSBF into an empty state
// under it).
func (s *Set) Exclusive(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lk != nil {
		if err := s.lk.Lock(); err != nil {
			return err
		}
		defer s.lk.Unlock()
	}
	return fn()
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

// ErrNoMerge is returned by OrShard for a DSBF, and when a DSBF is to be
// merged into one that is not empty: its leaves split when their own URLs
// reach a bound, so two trees' leaves hold different URLs and their bits
// cannot be OR-ed; a tree can only be copied whole into an empty state.
// It wraps format.ErrMismatch.
var ErrNoMerge = fmt.Errorf("%w: a DSBF can only be copied into an empty state, not merged by OR (filter the source's URLs into it instead)", format.ErrMismatch)

// OrShard ORs data, shard i of a state of the same layout, parameters and
// key, into shard i, word by word with atomic ORs (safe while others
// decide), and returns the bits it added: the union of two Bloom filters
// (or MDBFs) of the same parameters is the filter of the union.
func (s *Set) OrShard(i int, data []byte) (added uint64, err error) {
	if s.meta.Spec.Layout == format.DSBF {
		return 0, ErrNoMerge
	}
	if s.fault != nil {
		defer s.catch(debug.SetPanicOnFault(true), &err)
	}
	a := s.l.array()
	dst := a.shards[i]
	if len(data) != len(dst)*8 {
		return 0, fmt.Errorf("%w: shard %s has %d bytes, the source's %d", ErrLayout, format.ShardName(i), len(dst)*8, len(data))
	}
	for w := range dst {
		v := binary.NativeEndian.Uint64(data[8*w:])
		if v == 0 {
			continue
		}
		old := atomic.OrUint64(&dst[w], v)
		added += uint64(bits.OnesCount64(v &^ old))
	}
	return added, nil
}
