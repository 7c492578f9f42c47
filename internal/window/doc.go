// Package window is the arithmetic of time-windowed states ("seen in the
// last N days"): a window's spec as the metadata keeps it, the generation
// every process computes from its own clock and agrees on through the
// highest generation used so far, the generation tags of windowed keyed
// slots, the schedule of the sweep that keeps tags from repeating, and the
// false-duplicate model.
//
// It holds no state and does no I/O: the layouts and backends that keep a
// window (see docs/windows.md) call it, so that a directory, Redis and the
// tests agree on every boundary to the nanosecond.
//
// Time is cut into generations of Spec.Length, counted from Spec.Epoch:
//
//	g = floor((t − Epoch) / Length)
//
// A URL stamped with generation h is live at generation g while
// g − h < Generations; the window is Generations × Length.
package window
