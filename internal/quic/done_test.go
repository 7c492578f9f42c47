package quic

import (
	"math/rand/v2"
	"net/netip"
	"runtime"
	"testing"

	"github.com/urldedupd/urldedupd/internal/racetest"
)

// The done table against a model (a FIFO of what it remembered, oldest
// first, entries forgotten or remembered again marked dead, still taking
// their place until they are the oldest): random remembers of new keys and
// of keys held, forgets, the cap, and expiry; every key's lookup and the
// count checked after each step.
func TestDoneTableModel(t *testing.T) {
	racetest.SkipSequential(t)
	for _, max := range []int{1, 2, 5, 64, 100, 1000} {
		rng := rand.New(rand.NewPCG(uint64(max), 7))
		d := doneTable{max: max}
		type item struct {
			k    flowKey
			c    doneConn
			live bool
		}
		var fifo []item
		keyOf := func(i int) flowKey {
			return makeFlowKey(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), uint16(i)), testServer)
		}
		find := func(k flowKey) int {
			for i, it := range fifo {
				if it.live && it.k == k {
					return i
				}
			}
			return -1
		}
		keys := 3 * max
		now := int64(0)
		for step := range 4000 {
			k := keyOf(rng.IntN(keys))
			switch op := rng.IntN(10); {
			case op < 5:
				c := doneConn{version: Version1, scid: rng.Uint64(), at: now}
				if i := find(k); i >= 0 {
					fifo[i].live = false
				}
				if len(fifo) == max {
					fifo = fifo[1:]
				}
				fifo = append(fifo, item{k, c, true})
				d.remember(k, c)
			case op < 7:
				if i := find(k); i >= 0 {
					fifo[i].live = false
				}
				d.forget(k)
			case op < 8:
				now += int64(rng.IntN(3))
				linger := int64(5)
				d.expire(now, linger)
				for len(fifo) > 0 && (!fifo[0].live || now-fifo[0].c.at >= linger) {
					fifo = fifo[1:]
				}
			}
			live := 0
			for _, it := range fifo {
				if it.live {
					live++
				}
			}
			for i := range keys {
				k := keyOf(i)
				c, ok := d.get(k)
				j := find(k)
				if ok != (j >= 0) || (ok && c != fifo[j].c) {
					t.Fatalf("max %d step %d key %d: %v %+v, model %d", max, step, i, ok, c, j)
				}
			}
			if d.len() != live || d.n != len(fifo) || d.len() > max {
				t.Fatalf("max %d step %d: %d held (%d in the ring), model %d (%d)", max, step, d.len(), d.n, live, len(fifo))
			}
		}
	}
}

// A full table's index is at most half full, and a table emptied by
// expiry gives its memory back.
func TestDoneTableMemory(t *testing.T) {
	d := doneTable{max: 1000}
	for i := range 5000 {
		d.remember(makeFlowKey(netip.AddrPortFrom(testClient.Addr(), uint16(i)), testServer), doneConn{at: int64(i)})
		if used := d.len(); 2*used > len(d.index) || len(d.ring) > d.max || 4*len(d.ring) < len(d.index) {
			t.Fatalf("%d held: ring %d, index %d slots", used, len(d.ring), len(d.index))
		}
	}
	if d.len() != 1000 {
		t.Fatalf("%d held, want the cap", d.len())
	}
	d.expire(1e12, 1)
	if d.len() != 0 || d.ring != nil || d.index != nil {
		t.Errorf("after expiry: %d held, ring %d, index %d", d.len(), len(d.ring), len(d.index))
	}
}

// DoneCost bounds what a remembered connection takes, measured on a table
// filled to its cap.
func TestDoneCost(t *testing.T) {
	for _, n := range []int{1000, 3000, 1 << 14} { // a power of two, and sizes that round the index up
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		d := &doneTable{max: n}
		for i := range 2 * n {
			d.remember(makeFlowKey(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 40000), testServer), doneConn{at: int64(i)})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if d.len() != n {
			t.Fatalf("%d held, want %d", d.len(), n)
		}
		per := (int(after.HeapAlloc) - int(before.HeapAlloc)) / n
		t.Logf("max %d: %d bytes per entry; DoneCost %d", n, per, DoneCost)
		if per > DoneCost {
			t.Errorf("max %d: %d bytes per entry, over DoneCost %d", n, per, DoneCost)
		}
		runtime.KeepAlive(d)
	}
}
