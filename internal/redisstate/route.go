package redisstate

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// pipes holds one attempt's pipelines: one for a single server, one per
// master for a cluster.
//
// A cluster's commands never go through the cluster client's pipeline:
// when the first command sent to a node comes back with an error it deems
// retryable (CLUSTERDOWN, TRYAGAIN, LOADING, a reset connection, …),
// go-redis re-queues every command that was sent to that node, those that
// ran included, and sends them again, up to MaxRedirects+1 times, whatever
// MaxRetries says. A SETBIT that ran twice answers "dup" the second time,
// and its URL is never answered new by anyone. Instead each master's
// commands go on that master's own client (MaxRetries -1: never sent
// again), where every command carries its own reply, and the commands
// refused unrun are sent again by Decide alone.
type pipes struct {
	r     *Redis
	list  []*nodePipe
	byKey map[string]*nodePipe // cluster: by key, this attempt
	node  map[*redis.Client]*nodePipe
}

// nodePipe is the pipeline of one node, with its WAIT.
type nodePipe struct {
	pipe redis.Pipeliner
	wait *redis.Cmd
	ran  bool // some command of it ran: its WAIT counts
}

func (r *Redis) pipes() *pipes {
	p := &pipes{r: r}
	if r.cluster == nil {
		p.list = []*nodePipe{{pipe: r.c.Pipeline()}}
	}
	return p
}

// of returns the pipeline of the master that holds shard key i, or an
// error when no master is known for its slot (nothing was sent).
func (p *pipes) of(ctx context.Context, i int) (*nodePipe, error) {
	return p.ofKey(ctx, p.r.keys[i])
}

// ofKey returns the pipeline of the master that holds key.
func (p *pipes) ofKey(ctx context.Context, key string) (*nodePipe, error) {
	if p.r.cluster == nil {
		return p.list[0], nil
	}
	if np := p.byKey[key]; np != nil {
		return np, nil
	}
	m, err := p.r.cluster.MasterForKey(ctx, key)
	if err != nil {
		return nil, err
	}
	if p.node == nil {
		p.byKey, p.node = map[string]*nodePipe{}, map[*redis.Client]*nodePipe{}
	}
	np := p.node[m]
	if np == nil {
		np = &nodePipe{pipe: m.Pipeline()}
		p.node[m] = np
		p.list = append(p.list, np)
	}
	p.byKey[key] = np
	return np, nil
}

// exec runs every pipeline at once; with replicas above 0, each ends with
// a WAIT for that many replicas (WAIT counts the writes of its own
// connection, so each master needs its own). Every command carries its
// own error.
func (p *pipes) exec(ctx context.Context, replicas int, timeout time.Duration) {
	for _, np := range p.list {
		if replicas > 0 {
			np.wait = np.pipe.Do(ctx, "WAIT", replicas, timeout.Milliseconds())
		}
	}
	if len(p.list) == 1 {
		_, _ = p.list[0].pipe.Exec(ctx)
		return
	}
	var wg sync.WaitGroup
	for _, np := range p.list {
		wg.Go(func() { _, _ = np.pipe.Exec(ctx) })
	}
	wg.Wait()
}

// For returns the pipeline of the master that holds key (layout.Pipes).
func (p *pipes) For(ctx context.Context, key string) (redis.Pipeliner, error) {
	np, err := p.ofKey(ctx, key)
	if err != nil {
		return nil, err
	}
	return np.pipe, nil
}

// Exec runs every pipeline at once, without WAIT (layout.Pipes).
func (p *pipes) Exec(ctx context.Context) { p.exec(ctx, 0, p.r.timeout) }

// transport is what the state gives its layout's Redis code
// (layout.Transport).
type transport struct{ r *Redis }

func (t transport) Client() redis.UniversalClient { return t.r.c }
func (t transport) Key(name string) string        { return t.r.prefix + ":" + name }
func (t transport) Pipes() layout.Pipes           { return t.r.pipes() }
func (transport) NotRun(err error) bool           { return notRun(err) }
func (t transport) Timeout() time.Duration        { return t.r.timeout }
func (t transport) Replicas() int                 { return t.r.replicas }

// Refused learns a cluster's slots again, after commands it refused
// unrun (MOVED, CLUSTERDOWN, …).
func (t transport) Refused(ctx context.Context) {
	if t.r.cluster != nil {
		t.r.cluster.ReloadState(ctx)
	}
}

func (t transport) Answers(ctx context.Context, sigs []signature.Signature, ans []uint8, first []bool) error {
	return t.r.answers(ctx, sigs, ans, first)
}

var _ layout.Transport = transport{}
