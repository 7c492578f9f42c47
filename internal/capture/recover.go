package capture

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// ErrPanic is wrapped by a PanicError: a panic in the per-packet path that
// Run recovered from.
var ErrPanic = errors.New("panic while processing a packet")

// PanicError describes a panic that Run recovered from: the packet being
// processed is skipped, the connection it belonged to is dropped, and the
// capture goes on.
type PanicError struct {
	Where string // "FILE: packet N" for files, "NAME: packet N" otherwise
	Flow  string // "SRC -> DST" of the connection direction dropped; empty if none
	Value any    // what panic was called with
	Stack []byte
}

func (e *PanicError) Error() string {
	s := fmt.Sprintf("capture: %s: %v: %v", e.Where, ErrPanic, e.Value)
	if e.Flow != "" {
		s += "; dropped the connection " + e.Flow
	}
	return s
}

func (e *PanicError) Unwrap() error { return ErrPanic }

// positioner is a Source that can say where its last frame came from.
type positioner interface {
	Position() string
}

// recovered handles a panic that ended a run of the packet loop: it counts
// it, drops the connection being worked on and reports it. It returns the
// report; stuck is true when no packet was read since the last panic (the
// source itself panics), and the run should end rather than loop.
func (e *Engine) recovered(v any, src Source, flushing bool) (perr *PanicError, stuck bool) {
	e.stats.Panics++
	stuck = e.panicked && e.stats.Packets == e.panicAt
	e.panicked, e.panicAt = true, e.stats.Packets
	perr = &PanicError{Value: v, Stack: debug.Stack()}
	if p, ok := src.(positioner); ok {
		perr.Where = p.Position()
	} else {
		perr.Where = fmt.Sprintf("packet %d", e.stats.Packets)
	}
	if e.Name != "" {
		perr.Where = e.Name + ": " + perr.Where
	}
	if flushing {
		perr.Where += " (flushing the connections at the end)"
	}
	if from, to, ok := e.asm.dropBusy(); ok {
		perr.Flow = from + " -> " + to
	}
	if e.OnPanic != nil {
		e.OnPanic(perr)
	}
	return perr, stuck
}
