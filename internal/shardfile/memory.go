package shardfile

import (
	"fmt"
	"time"

	"github.com/edsrzf/mmap-go"

	"github.com/urldedupd/urldedupd/internal/format"
)

// Memory returns a state held in this process's anonymous memory only,
// never in a file: of the format spec, or of the complete metadata m when
// m is not nil (as init makes it, state.Init.Meta: layout, sizes, plan,
// and m.Key, which a keyed layout needs). Its shards are zero pages until
// written, so making one costs nothing however large; it has no path, no
// lock and nothing to sync, and it is gone at Close. It is for tests and
// experiments that do not test the files.
func Memory(spec *format.Spec, m *format.Meta) (*Dir, error) {
	meta, err := format.Creating(spec, m, time.Now())
	if err != nil {
		return nil, fmt.Errorf("shardfile: in memory: %w", err)
	}
	d := &Dir{meta: meta, noSync: true, key: meta.Key, memory: true}
	d.meta.Key = nil // as a directory's: the key is Key(), never in Meta()
	for i := range d.maps {
		mp, err := mmap.MapRegion(nil, int(meta.Sizes.ShardBytes), mmap.RDWR, mmap.ANON, 0)
		if err != nil {
			_ = d.release()
			return nil, fmt.Errorf("shardfile: in memory: shard %s: %w", format.ShardName(i), err)
		}
		d.maps[i] = mp
	}
	return d, nil
}

// InMemory reports whether the Dir is held in memory (Memory), not in a
// directory.
func (d *Dir) InMemory() bool { return d.memory }
