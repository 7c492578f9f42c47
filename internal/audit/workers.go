package audit

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/urldedupd/urldedupd/internal/capture"
)

// Workers is one capture spread over several sources that share the
// frames of one interface (AF_PACKET fanout by flow: each connection's
// frames, both ways, reach one of them): a Pipeline each, its own engine,
// all handing their requests to one Recorder (a Log is safe for that: it
// locks). The state's atomic decision makes one URL new once, whichever
// worker sees it first.
type Workers struct {
	Pipes []*Pipeline
	// OnRestart, when set, is told that worker i's source failed with err
	// and is opened again (at most once a second).
	OnRestart func(i int, err error)
	// Retry is the wait before a failed worker's source is opened again;
	// zero means a second.
	Retry time.Duration
}

// NewWorkers returns n pipelines configured by opts that hand every
// request to rec (see NewPipeline for flush).
func NewWorkers(n int, opts *capture.Options, rec Recorder, flush func() error) *Workers {
	w := &Workers{}
	for range max(n, 1) {
		w.Pipes = append(w.Pipes, NewPipeline(opts, rec, flush))
	}
	return w
}

// Stop ends every worker's run before its next frame (capture.Engine.Stop).
func (w *Workers) Stop() {
	for _, p := range w.Pipes {
		p.Engine.Stop()
	}
}

// Stats are the workers' counts added up: every counter a sum (the
// kernel's drops too: each worker has its own socket).
func (w *Workers) Stats() capture.Stats {
	var sum capture.Stats
	var drops uint64
	for _, p := range w.Pipes {
		st := p.Engine.Stats()
		drops += st.KernelDrops
		capture.StatsCounters().Add(&sum, &st)
		sum.Reasons.Merge(&st.Reasons)
	}
	sum.KernelDrops = drops
	return sum
}

// Run runs worker i on the source open(i) returns, each in its own
// goroutine, until ctx is done or a worker ends for good, and returns why
// (the first error). A worker whose source fails (an error that is not
// ctx's, the engine's Stop, or the interface gone) is told to OnRestart
// and its source opened again, with its engine and what it holds; the
// others go on meanwhile. An open that fails ends the run.
func (w *Workers) Run(ctx context.Context, open func(i int) (capture.Source, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	retry := w.Retry
	if retry <= 0 {
		retry = time.Second
	}
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	end := func(err error) {
		once.Do(func() { first = err })
		cancel()
	}
	for i, p := range w.Pipes {
		wg.Go(func() {
			for {
				src, err := open(i)
				if err != nil {
					end(err)
					return
				}
				err = p.Run(ctx, src)
				src.Close()
				switch {
				case ctx.Err() != nil:
					end(ctx.Err())
					return
				case err == nil, errors.Is(err, capture.ErrStopped), errors.Is(err, capture.ErrInterfaceGone):
					end(err)
					return
				}
				if w.OnRestart != nil {
					w.OnRestart(i, err)
				}
				select {
				case <-ctx.Done():
					end(ctx.Err())
					return
				case <-time.After(retry):
				}
			}
		})
	}
	wg.Wait()
	return first
}
