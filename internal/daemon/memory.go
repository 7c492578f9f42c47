package daemon

import (
	"context"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"time"
)

// Returning memory after a burst. Big request bodies are unmapped when
// their request ends, but what a burst of connections leaves on the Go
// heap (goroutine stacks, net/http's per-connection buffers) stays
// resident until the next collection, which a quiet daemon does not run
// for 2 minutes, and the runtime's scavenger returns freed pages slowly.
// Every releaseEvery, off the request path, memory is given back when
// releaseConns or more front-end connections closed since the last look, when
// releaseOver bytes or more are free but resident, or when no collection
// ran since the last look while the heap grew that much over what was
// live after the last release.
const (
	releaseEvery = 5 * time.Second
	releaseOver  = 8 << 20
	releaseConns = 256
)

// releaseMemory runs until ctx ends. conns returns the front ends'
// connections open now and the most open at once since its last call.
func releaseMemory(ctx context.Context, conns func() (now, peak int)) {
	s := []rtmetrics.Sample{
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	read := func() (idle, objects, cycles uint64) {
		rtmetrics.Read(s)
		v := func(i int) uint64 {
			if s[i].Value.Kind() == rtmetrics.KindUint64 {
				return s[i].Value.Uint64()
			}
			return 0
		}
		return v(0) + v(1), v(2), v(3)
	}
	_, live, lastCycles := read()
	tick := time.NewTicker(releaseEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		idle, objects, cycles := read()
		now, peak := conns()
		if peak-now >= releaseConns || idle >= releaseOver || cycles == lastCycles && objects >= live+releaseOver {
			// Twice: the first collection only moves what sync.Pools hold
			// (net/http's per-connection buffers) to their victim caches.
			debug.FreeOSMemory()
			debug.FreeOSMemory()
			_, live, cycles = read()
		}
		lastCycles = cycles
	}
}
