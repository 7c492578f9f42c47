package bitcheck

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"
)

// OrShard ORs data, a shard's bytes in the file layout (at most
// ShardBytes), into shard i and returns how many bits were newly set. Like
// Merge, it is safe while the state is in use. It panics on a read-only
// Set. A shard truncated under the process makes it fail with
// shardfile.ErrFault.
func (s *Set) OrShard(i int, data []byte) (added uint64, err error) {
	s.mustWrite()
	defer s.catch(guard(), nil, &err)
	ws := s.words[i]
	var buf [8]byte
	for j := 0; j*8 < len(data) && j < len(ws); j++ {
		chunk := data[j*8:]
		if len(chunk) < 8 {
			buf = [8]byte{}
			copy(buf[:], chunk)
			chunk = buf[:]
		}
		v := binary.LittleEndian.Uint64(chunk) // bytes in address order
		if bitSwizzle != 0 {
			v = bits.ReverseBytes64(v)
		}
		if v == 0 || atomic.LoadUint64(&ws[j])&v == v {
			continue
		}
		old := atomic.OrUint64(&ws[j], v)
		added += uint64(bits.OnesCount64(v &^ old))
	}
	return added, nil
}
