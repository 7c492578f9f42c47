package state

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/urldedupd/urldedupd/internal/bloomlayout"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/redisstate"
)

// MergeOptions configure State.Merge. A nil *MergeOptions is the zero one.
type MergeOptions struct {
	// Progress, when set and the destination is in Redis, names the
	// source: each shard done is recorded under it (redisstate.Progress),
	// so that a merge interrupted and run again resumes where it stopped.
	Progress string
}

// Merged is what State.Merge did.
type Merged struct {
	Shards int // source shards sent (OR-ed, copied or re-inserted)
	Empty  int // source shards with nothing in them
	Done   int // shards skipped: recorded done by an earlier run (Progress)
	// Bits is how many bits were added (Bitmap into a directory; an OR
	// in Redis does not count them).
	Bits uint64
	// Copied is how many Keyed shards were copied byte for byte, into a
	// destination shard that was empty; the others were re-inserted.
	Copied int
	// Fingerprints are the re-inserted fingerprints' counts (Keyed).
	Fingerprints keyed.MergeCounts
}

// Merge adds every URL src holds to s, so that s answers "dup" for each
// (Keyed past capacity: except those counted NotStored). Either may be a
// directory or Redis. They must be compatible (format.Meta.Compatible:
// layout, signature, normalization, sizes and key); if not, Merge returns
// an error wrapping format.ErrMismatch before changing anything.
//
// Bitmap: bits are OR-ed, word by word (a directory) or by BITOP in a
// transaction (Redis). Keyed: slots hold fingerprints in the order they
// came, so OR is wrong: a shard is copied byte for byte when its
// destination is empty (a Redis key that does not exist, set by SET NX; a
// directory's shard only when Open created the directory, since another
// process deciding on it meanwhile would be overwritten), and otherwise
// each fingerprint is re-inserted by the ordinary decision
// (keyed.MergeShard), which is safe while others decide on s.
//
// src is only read. A fault on a directory's mapping (a shard file
// truncated meanwhile) is returned as an error, not SIGBUS.
func (s *State) Merge(ctx context.Context, src *State, opts *MergeOptions) (m Merged, err error) {
	if opts == nil {
		opts = &MergeOptions{}
	}
	if err := s.meta.Compatible(src.meta); err != nil {
		return m, fmt.Errorf("state: merge %s into %s: %w", src, s, err)
	}
	if s.redis == nil && s.dir.ReadOnly() {
		return m, fmt.Errorf("state: merge into %s: %w", s, keyed.ErrReadOnly)
	}
	defer s.catchFault(debug.SetPanicOnFault(true), src, &err)
	how := s.layout.Merge()
	if how == layout.MergeCopy && s.redis == nil {
		return s.copyTree(ctx, src)
	}
	if how == layout.MergeCopy {
		empty, err := s.emptyFor(ctx, opts.Progress)
		if err != nil {
			return m, err
		}
		if !empty {
			return m, fmt.Errorf("state: merge %s into %s: %w", src, s, s.noMerge())
		}
	}
	w := merger{dst: s, how: how, opts: opts, m: &m}
	if how == layout.MergeReinsert {
		w.geo, err = keyed.NewGeometry(s.meta.Sizes.ShardBytes)
		if err != nil {
			return m, fmt.Errorf("state: %s: %w", s, err)
		}
		if s.redis == nil {
			w.local, _ = s.local.(keyed.Inserter)
		}
	}
	for i := range format.Shards {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		if err := w.shard(ctx, src, i); err != nil {
			return m, err
		}
	}
	return m, s.Sync()
}

type merger struct {
	dst   *State
	how   layout.Merge
	opts  *MergeOptions
	m     *Merged
	geo   keyed.Geometry
	local keyed.Inserter // a directory destination that merges by re-inserting
}

// shard merges shard i of src into the destination, and records it done.
func (w *merger) shard(ctx context.Context, src *State, i int) error {
	r := w.dst.redis
	var prog interface {
		Done(context.Context, int) (bool, error)
		Mark(context.Context, int) error
	}
	if r != nil && w.opts.Progress != "" {
		p := r.Progress(w.opts.Progress)
		if done, err := p.Done(ctx, i); err != nil || done {
			if done {
				w.m.Done++
			}
			return err
		}
		prog = p
	}
	data, err := src.shardBytes(ctx, i)
	if err != nil {
		return err
	}
	if allZero(data) {
		w.m.Empty++
	} else {
		w.m.Shards++
		if err := w.send(ctx, i, data); err != nil {
			return err
		}
	}
	if prog != nil {
		return prog.Mark(ctx, i)
	}
	return nil
}

// send merges data, shard i of a compatible state, into the destination.
func (w *merger) send(ctx context.Context, i int, data []byte) error {
	s := w.dst
	switch {
	case w.how == layout.MergeCopy && s.redis != nil:
		copied, err := s.redis.CopyShard(ctx, i, data)
		if err == nil && !copied { // written since Merge found it empty
			err = fmt.Errorf("state: merge into %s: leaf %s: %w", s, format.ShardName(i), bloomlayout.ErrNoMerge)
		}
		w.m.Copied += b2i(copied)
		return err
	case w.how == layout.MergeOr && s.redis != nil:
		return s.redis.OrShard(ctx, i, data)
	case w.how == layout.MergeOr:
		o, ok := s.local.(layout.Orer)
		if !ok {
			return fmt.Errorf("state: merge into %s: %w: layout %s cannot OR a shard", s, format.ErrLayout, s.meta.Spec.Layout)
		}
		n, err := o.OrShard(i, data)
		w.m.Bits += n
		return err
	case w.how != layout.MergeReinsert:
		return fmt.Errorf("state: merge into %s: %w: layout %s is only copied whole", s, format.ErrLayout, s.meta.Spec.Layout)
	case s.redis != nil:
		copied, err := s.redis.CopyShard(ctx, i, data)
		if err != nil || copied {
			w.m.Copied += b2i(copied)
			return err
		}
		ins, ok := s.redis.Remote().(keyed.Inserter)
		if !ok {
			return fmt.Errorf("state: merge into %s: %w: layout %s cannot re-insert in Redis", s, format.ErrLayout, s.meta.Spec.Layout)
		}
		return w.reinsert(ctx, i, data, ins)
	}
	if d := s.dir.Shard(i); s.dir.Created() && allZero(d) {
		for off := 0; off < len(data); off += pageBytes { // pages of zeros stay unwritten: a sparse file stays sparse
			if p := data[off:min(off+pageBytes, len(data))]; !allZero(p) {
				copy(d[off:], p)
			}
		}
		w.m.Copied++
		return nil
	}
	return w.reinsert(ctx, i, data, w.local)
}

func (w *merger) reinsert(ctx context.Context, i int, data []byte, dst keyed.Inserter) error {
	c, err := keyed.MergeShard(ctx, w.geo, uint8(i), data, dst)
	w.m.Fingerprints.Add(c)
	if err != nil {
		return fmt.Errorf("state: merge into %s: %w", w.dst, err)
	}
	return nil
}

// emptyFor reports whether a DSBF in Redis holds nothing, so that a tree
// can be copied into it: no shard key, but those progress records as
// copied by an earlier run.
func (s *State) emptyFor(ctx context.Context, progress string) (bool, error) {
	var done *redisstate.Progress
	if progress != "" {
		done = s.redis.Progress(progress)
	}
	return s.redis.Empty(ctx, done)
}

// copyTree copies the DSBF src, leaf by leaf, into s, a directory, holding
// s's batch lock throughout, so no process decides on s meanwhile; s must
// be empty (bloomlayout.ErrNoMerge).
func (s *State) copyTree(ctx context.Context, src *State) (m Merged, err error) {
	x, ok := s.local.(layout.Exclusiver)
	if !ok {
		return m, fmt.Errorf("state: merge %s into %s: %w: layout %s has no batch lock", src, s, format.ErrLayout, s.meta.Spec.Layout)
	}
	err = x.Exclusive(func() error {
		for i := range format.Shards {
			if !allZero(s.dir.Shard(i)) {
				return fmt.Errorf("state: merge %s into %s: %w", src, s, s.noMerge())
			}
		}
		for i := range format.Shards {
			data, err := src.shardBytes(ctx, i)
			if err != nil {
				return err
			}
			if allZero(data) {
				m.Empty++
				continue
			}
			d := s.dir.Shard(i)
			for off := 0; off < len(data); off += pageBytes { // pages of zeros stay unwritten
				if p := data[off:min(off+pageBytes, len(data))]; !allZero(p) {
					copy(d[off:], p)
				}
			}
			m.Shards++
			m.Copied++
		}
		return nil
	})
	if err != nil {
		return m, err
	}
	return m, s.Sync()
}

// ErrNoWindowMerge is returned by Merge when a windowed state is to be
// merged into one that holds URLs.
var ErrNoWindowMerge = fmt.Errorf("%w: a windowed state can only be copied into an empty state with the same window and epoch (a snapshot or a migrate of it), not merged into one that holds URLs (filter the source's URLs into it instead)", format.ErrMismatch)

// noMerge is the error of a copy-only layout's merge into a state that
// holds URLs.
func (s *State) noMerge() error {
	if s.meta.Spec.Layout.Windowed() {
		return ErrNoWindowMerge
	}
	return bloomlayout.ErrNoMerge
}

// shardBytes returns shard i as stored: the directory's mapping, or the
// Redis key's bytes padded with zeros to the shard size.
func (s *State) shardBytes(ctx context.Context, i int) ([]byte, error) {
	if s.redis != nil {
		return s.redis.Shard(ctx, i)
	}
	return s.dir.Shard(i), nil
}

// catchFault restores the fault setting and turns a fault inside s's or
// src's directory mapping into *errp; any other panic goes on.
func (s *State) catchFault(restore bool, src *State, errp *error) {
	debug.SetPanicOnFault(restore)
	r := recover()
	if r == nil {
		return
	}
	for _, x := range []*State{src, s} {
		if x.redis == nil && x.dir != nil {
			if err := x.dir.Fault(r); err != nil {
				*errp = errors.Join(*errp, err)
				return
			}
		}
	}
	panic(r)
}

const pageBytes = 4096

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Template returns the metadata to create a state compatible with s from
// (Options.New): its spec, sizes and plan and, for the Keyed layout, its
// key. Keep it as secret as the key.
func (s *State) Template() *format.Meta {
	m := s.meta
	m.Key = s.key
	return &m
}
