package audit

import (
	"context"

	"github.com/urldedupd/urldedupd/internal/capture"
)

// Recorder decides requests and writes their records: a *Log, or
// something that keeps Logs (the daemon's starts a new Log when a
// decision fails, so that capture never stops for the backend).
type Recorder interface {
	// Request decides one request, or queues it, and writes its record.
	Request(*capture.Request)
	// Flush writes what has been decided, for when the input pauses.
	Flush()
	// FlushWith flushes, then calls out (the output's flush, or nil),
	// under the lock that guards the output against the Recorder's
	// timer.
	FlushWith(out func() error)
}

var _ Recorder = (*Log)(nil)

// Pipeline is one capture, source → engine → decisions → records: frames
// from a capture source through a capture engine (decoding, defragmenting,
// reassembly, request parsing), each request found handed to a Recorder,
// which decides it against a state and writes its record. The CLI's replay
// and capture run one each, and so does every capture source of the
// daemon.
type Pipeline struct {
	// Engine is the pipeline's engine: a caller may set its Name, OnPanic
	// and Tick before Run, and read its Stats.
	Engine *capture.Engine
}

// NewPipeline returns a pipeline whose engine, configured by opts, hands
// every request to rec. Whenever a live source has no frame for its poll
// timeout, rec is flushed and then flush (the output's; nil for none) is
// called, so that records are written while the wire is quiet.
func NewPipeline(opts *capture.Options, rec Recorder, flush func() error) *Pipeline {
	eng := capture.NewEngine(opts, rec.Request)
	eng.Idle = func() { rec.FlushWith(flush) }
	return &Pipeline{Engine: eng}
}

// Run captures from src until it ends or fails, or ctx is done, and
// returns why (nil at the end of a file source). It does not close the
// Recorder: the caller does, to decide and write what is still queued.
func (p *Pipeline) Run(ctx context.Context, src capture.Source) error {
	return p.Engine.Run(ctx, src)
}
