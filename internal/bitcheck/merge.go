package bitcheck

import (
	"math/bits"
	"sync/atomic"
)

// Merge ORs every bit of src into s and returns how many bits were newly
// set. It is safe while other goroutines and processes use s: bits only go
// from 0 to 1, and each word is OR-ed atomically. The caller checks that
// both states have the same format. It panics on a read-only Set. A shard
// of either truncated under the process makes it fail with
// shardfile.ErrFault, after setting some bits.
func (s *Set) Merge(src *Set) (added uint64, err error) {
	s.mustWrite()
	defer s.catch(guard(), src, &err)
	for i, sw := range src.words {
		dw := s.words[i]
		for j := range sw {
			v := atomic.LoadUint64(&sw[j])
			if v == 0 || atomic.LoadUint64(&dw[j])&v == v {
				continue
			}
			old := atomic.OrUint64(&dw[j], v)
			added += uint64(bits.OnesCount64(v &^ old))
		}
	}
	return added, nil
}
