package respserver

import (
	"context"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/urldedupd/urldedupd/internal/state"
)

// infoCache measures the state at most once a second for BF.INFO and
// BF.CARD (a measure reads all of it).
type infoCache struct {
	mu  sync.Mutex
	at  time.Time
	rep state.Report
	err error
}

func (c *infoCache) get(ctx context.Context, st *state.State) (state.Report, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) > time.Second {
		c.rep, c.err = st.Report(ctx)
		c.at = time.Now()
	}
	return c.rep, c.err
}

// infoFields are BF.INFO's, in RedisBloom's order, with the names BF.INFO
// key FIELD takes.
var infoFields = []struct{ name, arg string }{
	{"Capacity", "CAPACITY"},
	{"Size", "SIZE"},
	{"Number of filters", "FILTERS"},
	{"Number of items inserted", "ITEMS"},
	{"Expansion rate", "EXPANSION"},
}

func infoField(arg []byte) int {
	for i, f := range infoFields {
		if strings.EqualFold(string(arg), f.arg) {
			return i
		}
	}
	return -1
}

// infoValue is field i of rep: the capacity planned (0: none), the
// state's bytes, one filter, the distinct items the state estimates it
// holds (-1: a full bitmap, no estimate), no expansion.
func infoValue(rep *state.Report, i int) int64 {
	switch i {
	case 0:
		return int64(rep.Capacity)
	case 1:
		return rep.StateBytes
	case 2:
		return 1
	case 3:
		if rep.EstimatedDistinct == nil {
			return -1
		}
		return int64(math.Round(*rep.EstimatedDistinct))
	}
	return 0
}

// info answers BF.INFO and BF.CARD: figures of the whole state, whatever
// the key (every key shares it).
func (cn *conn) info(s *step) {
	rep, err := cn.f.info.get(context.Background(), cn.f.st)
	w := &cn.w
	switch {
	case err != nil:
		s.err = stateError(err)
		w.Error(s.err)
	case s.op == opBFCard:
		w.Int(max(infoValue(&rep, 3), 0))
	case len(s.args) == 3:
		w.Array(1)
		w.Int(infoValue(&rep, infoField(s.args[2])))
	default:
		w.Map(len(infoFields))
		for i, f := range infoFields {
			w.BulkString(f.name)
			w.Int(infoValue(&rep, i))
		}
	}
}
