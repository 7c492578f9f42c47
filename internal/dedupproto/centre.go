package dedupproto

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// CentreOptions configure a Centre. Zero fields take the defaults.
type CentreOptions struct {
	// Limits cap the frames the centre reads.
	Limits *Limits
	// Logf says what went wrong, what was refused, and which frames were
	// completed at their deadline; default: nothing.
	Logf func(format string, args ...any)
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Centre is the paper's centre of a network. It asks its hosts about
// every frame one of them submits (local_reduce_pool), then the other
// networks' centres (dist_reduce_pool), removing each URL someone holds,
// and hands what is left to its hosts (task_URL). It also asks its hosts,
// for another network's centre, about that network's frames, and answers
// it. A frame is completed when every answer awaited has come, or at its
// deadline without the missing ones.
//
// Everything a centre knows is in its Redis: a centre that stops goes on
// where it stopped, and a frame it handled in part when it stopped is
// handled again (every receiver ignores a frame it has seen).
type Centre struct {
	top     *Topology
	net     *Network
	me      Node
	k       keys
	own     *redis.Client
	peers   map[netip.Addr]*redis.Client // its hosts and the other centres
	lim     Limits
	logf    func(string, ...any)
	now     func() time.Time
	st      Stats
	dl      time.Duration
	others  []netip.Addr                 // the other networks' centres
	hostIPs []netip.Addr                 // its hosts
	wakeups map[netip.Addr]chan struct{} // a peer's outbox has frames
}

// NewCentre returns the centre at ip in top. It connects lazily; Start
// makes task_URL and its hosts' group.
func NewCentre(top *Topology, ip netip.Addr, opts *CentreOptions) (*Centre, error) {
	n, role := top.Find(ip)
	if role != CentreRole {
		return nil, fmt.Errorf("%w: %s is no centre of the topology", ErrTopology, ip)
	}
	c := &Centre{top: top, net: n, me: n.Centre, k: keys(top.prefix()), dl: top.deadline(),
		peers: map[netip.Addr]*redis.Client{}, wakeups: map[netip.Addr]chan struct{}{},
		logf: func(string, ...any) {}, now: time.Now}
	if opts != nil {
		if opts.Limits != nil {
			c.lim = *opts.Limits
		}
		if opts.Logf != nil {
			c.logf = opts.Logf
		}
		if opts.Now != nil {
			c.now = opts.Now
		}
	}
	c.lim = c.lim.withDefaults()
	var err error
	if c.own, err = dial(c.me.Redis); err != nil {
		return nil, err
	}
	add := func(nd Node) error {
		cl, err := dial(nd.Redis)
		if err != nil {
			return err
		}
		c.peers[nd.IP] = cl
		c.wakeups[nd.IP] = make(chan struct{}, 1)
		return nil
	}
	for _, h := range n.Hosts {
		c.hostIPs = append(c.hostIPs, h.IP)
		if err := add(h); err != nil {
			c.Close()
			return nil, err
		}
	}
	for i := range top.Networks {
		if o := &top.Networks[i]; o != n {
			c.others = append(c.others, o.Centre.IP)
			if err := add(o.Centre); err != nil {
				c.Close()
				return nil, err
			}
		}
	}
	return c, nil
}

// Stats returns the centre's counts.
func (c *Centre) Stats() *Stats { return &c.st }

// Close closes the centre's connections.
func (c *Centre) Close() error {
	errs := []error{c.own.Close()}
	for _, p := range c.peers {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// Start makes task_URL and its hosts' consumer group unless they exist.
func (c *Centre) Start(ctx context.Context) error {
	return group(ctx, c.own, c.k.of(keyTaskURL), HostsGroup)
}

// Run starts the centre and serves until ctx ends. A Redis that cannot be
// reached is tried again, after a pause, until ctx ends.
func (c *Centre) Run(ctx context.Context) error {
	if err := c.Start(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for ip := range c.peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.sender(ctx, ip)
		}()
	}
	serve(ctx, func(ctx context.Context) (bool, error) { return c.Step(ctx, block) }, c.logf)
	wg.Wait()
	return nil
}

// sender sends the frames of the outbox of the peer at ip as they come,
// until ctx ends.
func (c *Centre) sender(ctx context.Context, ip netip.Addr) {
	serve(ctx, func(ctx context.Context) (bool, error) {
		n, err := c.drain(ctx, ip)
		if err == nil && n < outboxBatch {
			t := time.NewTimer(block)
			defer t.Stop()
			select {
			case <-ctx.Done():
			case <-c.wakeups[ip]:
			case <-t.C:
			}
		}
		return n > 0, err
	}, c.logf)
}

// wake tells the sender of the peer at ip that its outbox has frames.
func (c *Centre) wake(ip netip.Addr) {
	select {
	case c.wakeups[ip] <- struct{}{}:
	default:
	}
}

// Flush sends every frame waiting in the outboxes (Run's senders do it as
// frames come; a caller of Step calls Flush). It returns how many it
// sent; a peer that cannot be reached is an error, its frames kept.
func (c *Centre) Flush(ctx context.Context) (int, error) {
	total := 0
	var errs []error
	for ip := range c.peers {
		for {
			n, err := c.drain(ctx, ip)
			total += n
			if err != nil {
				errs = append(errs, err)
			}
			if err != nil || n < outboxBatch {
				break
			}
		}
	}
	return total, errors.Join(errs...)
}

// Outboxes: frames for a peer wait in a list of the centre's own Redis,
// written in the transaction that changes the pools, and are pushed onto
// the peer's inbox in batches. A centre never waits on a peer (a link
// to another network is slow, a peer may be down), and a frame is never
// lost between the pools and the peer: a centre that stops sends what
// its outboxes hold when it starts again (a frame pushed but not yet
// trimmed is sent twice, and ignored by its receiver).
const (
	outboxBatch = 256    // frames pushed at once
	maxOutbox   = 10_000 // frames an unreachable peer's outbox keeps (the newest)
)

// drain pushes up to outboxBatch frames of the peer's outbox onto its
// inbox, in one command, and trims them from the outbox.
func (c *Centre) drain(ctx context.Context, ip netip.Addr) (int, error) {
	key := c.k.of(keyOutbox + ip.String())
	frames, err := c.own.LRange(ctx, key, 0, outboxBatch-1).Result()
	if err != nil {
		return 0, c.unavailable(err)
	}
	if len(frames) == 0 {
		return 0, nil
	}
	args := make([]any, len(frames))
	bytes := 0
	for i, f := range frames {
		args[i] = f
		bytes += len(f)
	}
	if err := c.peers[ip].RPush(ctx, c.k.of(keyInbox), args...).Err(); err != nil {
		c.st.add(SendFailures, 1)
		if n, lerr := c.own.LLen(ctx, key).Result(); lerr == nil && n > maxOutbox {
			if c.own.LTrim(ctx, key, -maxOutbox, -1).Err() == nil {
				c.st.add(OutboxDropped, int(n-maxOutbox))
			}
		}
		return 0, fmt.Errorf("%w: %s: sending %d frames to %s: %v", ErrUnavailable, c.me.IP, len(frames), ip, err)
	}
	c.st.add(FramesSent, len(frames))
	c.st.add(BytesSent, bytes)
	if err := c.own.LTrim(ctx, key, int64(len(frames)), -1).Err(); err != nil {
		return len(frames), c.unavailable(err)
	}
	return len(frames), nil
}

// Step completes the frames whose deadline passed, then handles the next
// frame of the centre's inbox, waiting for one at most wait (or until the
// next deadline). It reports whether there was a frame.
func (c *Centre) Step(ctx context.Context, wait time.Duration) (bool, error) {
	next, err := c.expire(ctx)
	if err != nil {
		return false, err
	}
	if !next.IsZero() {
		wait = min(wait, max(next.Sub(c.now()), time.Millisecond))
	}
	b, err := inbox(ctx, c.own, c.k, wait)
	if b == nil {
		return false, err
	}
	if err := c.handle(ctx, b); err != nil {
		return true, err // left in the work list, handled again
	}
	return true, handled(ctx, c.own, c.k)
}

// handle dispatches one frame on its flag and its sender.
func (c *Centre) handle(ctx context.Context, b []byte) error {
	f, err := Decode(b, &c.lim)
	if err != nil {
		c.st.add(Malformed, 1)
		c.logf("%s: inbox: %v", c.me.IP, err)
		return nil
	}
	n, role := c.top.Find(f.IP)
	switch {
	case f.Flag == Submit && n == c.net && role == HostRole:
		return c.submitted(ctx, f)
	case f.Flag == Request && n != nil && n != c.net && role == HostRole:
		return c.requested(ctx, f)
	case f.Flag == Answer && (n == c.net && role == HostRole || n != nil && n != c.net && role == CentreRole):
		return c.answered(ctx, f)
	}
	c.st.add(Strangers, 1)
	c.logf("%s: inbox: refused %s %s from %s: no such frame comes from there", c.me.IP, f.Flag, f.Number, f.IP)
	return nil
}

// known reports whether the frame number is in a pool or was completed.
func (c *Centre) known(ctx context.Context, number string) (bool, error) {
	p := c.own.Pipeline()
	l := p.HExists(ctx, c.k.of(keyLocal), number)
	d := p.HExists(ctx, c.k.of(keyDist), number)
	e := p.Exists(ctx, c.k.of(keyDone+number))
	if _, err := p.Exec(ctx); err != nil {
		return false, c.unavailable(err)
	}
	return l.Val() || d.Val() || e.Val() > 0, nil
}

func (c *Centre) unavailable(err error) error {
	return fmt.Errorf("%w: %s: %v", ErrUnavailable, c.me.IP, err)
}

// submitted takes a host's frame into local_reduce_pool and asks the
// network's other hosts about it.
func (c *Centre) submitted(ctx context.Context, f *Frame) error {
	if ok, err := c.known(ctx, f.Number); err != nil || ok {
		if ok {
			c.st.add(Repeats, 1)
		}
		return err
	}
	f.Flag, f.Held = Request, nil
	expect := slices.DeleteFunc(slices.Clone(c.hostIPs), func(ip netip.Addr) bool { return ip == f.IP })
	if err := c.own.HSet(ctx, c.k.of(keySince), f.Number, c.now().UnixMilli()).Err(); err != nil {
		return c.unavailable(err)
	}
	return c.ask(ctx, keyLocal, f, expect, c.dl)
}

// requested takes another network's frame into dist_reduce_pool and asks
// this network's hosts about it.
func (c *Centre) requested(ctx context.Context, f *Frame) error {
	if ok, err := c.known(ctx, f.Number); err != nil || ok {
		if ok {
			c.st.add(Repeats, 1)
		}
		return err
	}
	f.Held = nil
	return c.ask(ctx, keyDist, f, c.hostIPs, c.dl)
}

// ask keeps f in pool, awaiting the answers of expect until the deadline
// dl from now, and sends f to each of them. A frame that awaits no one is
// completed at once. A peer whose Redis does not take the frame is
// awaited all the same: its deadline completes the frame.
func (c *Centre) ask(ctx context.Context, pool string, f *Frame, expect []netip.Addr, dl time.Duration) error {
	if len(expect) == 0 || len(f.URLs) == 0 {
		if err := c.own.HSet(ctx, c.k.of(pool), f.Number, mustAppend(f)).Err(); err != nil {
			return c.unavailable(err)
		}
		return c.complete(ctx, f.Number, nil)
	}
	members := make([]any, len(expect))
	for i, ip := range expect {
		members[i] = ip.String()
	}
	b := mustAppend(f)
	_, err := c.own.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, c.k.of(keyLocal), f.Number)
		p.HSet(ctx, c.k.of(pool), f.Number, b)
		p.Del(ctx, c.k.of(keyExpect+f.Number))
		p.SAdd(ctx, c.k.of(keyExpect+f.Number), members...)
		p.ZAdd(ctx, c.k.of(keyDeadlines), redis.Z{Score: float64(c.now().Add(dl).UnixMilli()), Member: f.Number})
		for _, ip := range expect {
			p.RPush(ctx, c.k.of(keyOutbox+ip.String()), b)
		}
		return nil
	})
	if err != nil {
		return c.unavailable(err)
	}
	c.st.add(Requests, 1)
	for _, ip := range expect {
		c.wake(ip)
	}
	return nil
}

// mustAppend is f's wire form; f was decoded or built from a decoded
// frame, so it is one.
func mustAppend(f *Frame) []byte {
	b, err := f.Append(nil)
	if err != nil {
		panic("dedupproto: a decoded frame does not encode: " + err.Error())
	}
	return b
}

// pooled returns the frame number and the pool it is in ("" when none).
func (c *Centre) pooled(ctx context.Context, number string) (*Frame, string, error) {
	for _, pool := range []string{keyLocal, keyDist} {
		b, err := c.own.HGet(ctx, c.k.of(pool), number).Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, "", c.unavailable(err)
		}
		f, err := Decode(b, &c.lim)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %s holds frame %s, which no longer decodes: %w", c.me.IP, pool, number, err)
		}
		return f, pool, nil
	}
	return nil, "", nil
}

// answered merges an answer: from a host, into the frame it was asked
// about; from another network's centre, into this network's own frame.
// Held URLs leave this network's frames (the paper deletes them), and
// are marked in another network's (which gets them back).
func (c *Centre) answered(ctx context.Context, a *Frame) error {
	who := a.IP.String()
	awaited, err := c.own.SIsMember(ctx, c.k.of(keyExpect+a.Number), who).Result()
	if err != nil {
		return c.unavailable(err)
	}
	f, pool, err := c.pooled(ctx, a.Number)
	if err != nil {
		return err
	}
	switch {
	case f == nil:
		c.st.add(LateAnswers, 1)
		c.logf("%s: answer to %s from %s came after the frame was completed", c.me.IP, a.Number, a.IP)
		return nil
	case !awaited:
		// A host's answer to this network's frame that has gone on to
		// the other networks came after its deadline; anything else not
		// awaited was received before.
		if n, role := c.top.Find(a.IP); pool == keyDist && n == c.net && role == HostRole && c.ours(f) {
			c.st.add(LateAnswers, 1)
			c.logf("%s: answer to %s from %s came after its deadline", c.me.IP, a.Number, a.IP)
		} else {
			c.st.add(Repeats, 1)
		}
		return nil
	}
	held := map[string]bool{}
	for i, u := range a.URLs {
		if a.IsHeld(i) {
			held[u] = true
		}
	}
	if n, _ := c.top.Find(f.IP); n == c.net {
		before := len(f.URLs)
		f.URLs = slices.DeleteFunc(f.URLs, func(u string) bool { return held[u] })
		c.st.add(URLsRemoved, before-len(f.URLs))
	} else {
		marks := make([]bool, len(f.URLs))
		for i, u := range f.URLs {
			marks[i] = f.IsHeld(i) || held[u]
		}
		f.Held = marks
	}
	var left *redis.IntCmd
	_, err = c.own.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, c.k.of(pool), f.Number, mustAppend(f))
		p.SRem(ctx, c.k.of(keyExpect+f.Number), who)
		left = p.SCard(ctx, c.k.of(keyExpect+f.Number))
		return nil
	})
	if err != nil {
		return c.unavailable(err)
	}
	c.st.add(Answers, 1)
	if left.Val() == 0 {
		return c.complete(ctx, f.Number, nil)
	}
	return nil
}

// ours reports whether f was submitted by a host of this network.
func (c *Centre) ours(f *Frame) bool {
	n, _ := c.top.Find(f.IP)
	return n == c.net
}

// expire completes the frames whose deadline has passed, with the
// answers they have, and returns the next deadline (zero when none).
func (c *Centre) expire(ctx context.Context) (time.Time, error) {
	now := c.now().UnixMilli()
	due, err := c.own.ZRangeByScore(ctx, c.k.of(keyDeadlines), &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(now, 10), Count: 64}).Result()
	if err != nil {
		return time.Time{}, c.unavailable(err)
	}
	for _, number := range due {
		missing, err := c.own.SMembers(ctx, c.k.of(keyExpect+number)).Result()
		if err != nil {
			return time.Time{}, c.unavailable(err)
		}
		slices.Sort(missing)
		if err := c.complete(ctx, number, missing); err != nil {
			return time.Time{}, err
		}
	}
	next, err := c.own.ZRangeWithScores(ctx, c.k.of(keyDeadlines), 0, 0).Result()
	if err != nil {
		return time.Time{}, c.unavailable(err)
	}
	if len(next) == 0 {
		return time.Time{}, nil
	}
	return time.UnixMilli(int64(next[0].Score)), nil
}

// complete ends a frame's check, with the answers of missing not come:
// this network's frame goes on to the other networks, or, when they have
// answered too (or there are none), to task_URL; another network's frame
// goes back to that network's centre with the marks of this network's
// hosts.
func (c *Centre) complete(ctx context.Context, number string, missing []string) error {
	f, pool, err := c.pooled(ctx, number)
	if err != nil {
		return err
	}
	if f == nil {
		return c.own.ZRem(ctx, c.k.of(keyDeadlines), number).Err()
	}
	if len(missing) > 0 {
		c.st.add(Deadlines, 1)
		c.logf("%s: frame %s completed at its deadline without the answers of %s", c.me.IP, number, strings.Join(missing, ", "))
		if err := c.own.HSet(ctx, c.k.of(keyMissing), number, c.missing(ctx, number, missing)).Err(); err != nil {
			return c.unavailable(err)
		}
	}
	origin, _ := c.top.Find(f.IP)
	switch {
	case origin != c.net:
		return c.reply(ctx, f, origin)
	case pool == keyLocal && len(c.others) > 0 && len(f.URLs) > 0:
		c.st.add(Completed, 1)
		// The other networks ask their hosts, within their deadline:
		// theirs is awaited for twice as long.
		return c.ask(ctx, keyDist, f, c.others, 2*c.dl)
	case pool == keyLocal:
		c.st.add(Completed, 1)
	}
	return c.handOut(ctx, f)
}

// missing is the list of the peers that did not answer frame number, in
// this phase and the ones before.
func (c *Centre) missing(ctx context.Context, number string, now []string) string {
	before, _ := c.own.HGet(ctx, c.k.of(keyMissing), number).Result()
	if before == "" {
		return strings.Join(now, ",")
	}
	return before + "," + strings.Join(now, ",")
}

// reply sends another network's frame back to its centre, its URLs
// marked where this network's hosts hold them, and forgets it.
func (c *Centre) reply(ctx context.Context, f *Frame, origin *Network) error {
	number, to := f.Number, origin.Centre.IP
	f.Flag, f.IP = Answer, c.me.IP
	b := mustAppend(f)
	if err := c.forget(ctx, number, func(p redis.Pipeliner) { p.RPush(ctx, c.k.of(keyOutbox+to.String()), b) }); err != nil {
		return err
	}
	c.wake(to)
	return nil
}

// handOut puts the URLs left in f into task_URL, one entry each with the
// frame's number, when it was submitted, and who did not answer, and
// forgets the frame, in one transaction.
func (c *Centre) handOut(ctx context.Context, f *Frame) error {
	p := c.own.Pipeline()
	since := p.HGet(ctx, c.k.of(keySince), f.Number)
	missing := p.HGet(ctx, c.k.of(keyMissing), f.Number)
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return c.unavailable(err)
	}
	err := c.forget(ctx, f.Number, func(p redis.Pipeliner) {
		for _, u := range f.URLs {
			v := map[string]any{"url": u, "number": f.Number}
			if s := since.Val(); s != "" {
				v["submitted"] = s
			}
			if m := missing.Val(); m != "" {
				v["missing"] = m
			}
			p.XAdd(ctx, &redis.XAddArgs{Stream: c.k.of(keyTaskURL), Values: v})
		}
	})
	if err == nil {
		c.st.add(URLsHandedOut, len(f.URLs))
	}
	return err
}

// forget removes the frame number from the pools and remembers it done,
// after more, in one transaction.
func (c *Centre) forget(ctx context.Context, number string, more func(redis.Pipeliner)) error {
	_, err := c.own.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if more != nil {
			more(p)
		}
		p.HDel(ctx, c.k.of(keyLocal), number)
		p.HDel(ctx, c.k.of(keyDist), number)
		p.HDel(ctx, c.k.of(keySince), number)
		p.HDel(ctx, c.k.of(keyMissing), number)
		p.Del(ctx, c.k.of(keyExpect+number))
		p.ZRem(ctx, c.k.of(keyDeadlines), number)
		p.Set(ctx, c.k.of(keyDone+number), 1, doneTTL)
		return nil
	})
	if err != nil {
		return c.unavailable(err)
	}
	return nil
}
