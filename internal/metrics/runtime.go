package metrics

import (
	"runtime"
	"runtime/debug"
	"time"
)

// collectGo writes the standard go_* metrics: goroutines, threads, the
// Go version, the memory statistics most dashboards read, and the
// garbage collector's pauses.
func collectGo(w *Writer) {
	w.Family("go_goroutines", Gauge, "Number of goroutines that currently exist.")
	w.Sample("go_goroutines", float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	w.Family("go_threads", Gauge, "Number of OS threads created.")
	w.Sample("go_threads", float64(threads))
	w.Family("go_info", Gauge, "Information about the Go environment.")
	w.Sample("go_info", 1, "version", runtime.Version())

	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	w.Family("go_gc_duration_seconds", Summary, "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.")
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		w.Sample("go_gc_duration_seconds", gc.PauseQuantiles[i].Seconds(), "quantile", q)
	}
	w.Sample("go_gc_duration_seconds_sum", gc.PauseTotal.Seconds())
	w.Sample("go_gc_duration_seconds_count", float64(gc.NumGC))

	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	for _, s := range []struct {
		name, typ, help string
		v               float64
	}{
		{"go_memstats_alloc_bytes", Gauge, "Number of bytes allocated in heap and currently in use.", float64(m.Alloc)},
		{"go_memstats_alloc_bytes_total", Counter, "Total number of bytes allocated in heap until now, even if released already.", float64(m.TotalAlloc)},
		{"go_memstats_sys_bytes", Gauge, "Number of bytes obtained from system.", float64(m.Sys)},
		{"go_memstats_mallocs_total", Counter, "Total number of heap objects allocated.", float64(m.Mallocs)},
		{"go_memstats_frees_total", Counter, "Total number of heap objects frees.", float64(m.Frees)},
		{"go_memstats_heap_alloc_bytes", Gauge, "Number of heap bytes allocated and currently in use.", float64(m.HeapAlloc)},
		{"go_memstats_heap_sys_bytes", Gauge, "Number of heap bytes obtained from system.", float64(m.HeapSys)},
		{"go_memstats_heap_idle_bytes", Gauge, "Number of heap bytes waiting to be used.", float64(m.HeapIdle)},
		{"go_memstats_heap_inuse_bytes", Gauge, "Number of heap bytes that are in use.", float64(m.HeapInuse)},
		{"go_memstats_heap_released_bytes", Gauge, "Number of heap bytes released to OS.", float64(m.HeapReleased)},
		{"go_memstats_heap_objects", Gauge, "Number of currently allocated objects.", float64(m.HeapObjects)},
		{"go_memstats_stack_inuse_bytes", Gauge, "Number of bytes obtained from system for stack allocator in non-CGO environments.", float64(m.StackInuse)},
		{"go_memstats_next_gc_bytes", Gauge, "Number of heap bytes when next garbage collection will take place.", float64(m.NextGC)},
		{"go_memstats_last_gc_time_seconds", Gauge, "Number of seconds since 1970 of last garbage collection.", float64(m.LastGC) / 1e9},
	} {
		w.Family(s.name, s.typ, s.help)
		w.Sample(s.name, s.v)
	}
}
