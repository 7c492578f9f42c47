package dedupproto

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Seen is a host's finish_URL: a urldedupd state (a *urldedupd.State is
// one). Decide records the URLs not held and answers them not dup; Check
// only looks.
type Seen interface {
	Decide(ctx context.Context, urls []string, dup []bool) error
	Check(ctx context.Context, urls []string, dup []bool) error
}

// HostOptions configure a Host. Zero fields take the defaults.
type HostOptions struct {
	// FrameURLs is how many URLs of URL_pool one submission takes at
	// most; default 1,000.
	FrameURLs int
	// Linger is how long a host waits for URL_pool to fill a frame
	// (FrameURLs) before it submits what there is; 0: at once. Fuller
	// frames cost the system fewer messages; each URL waits up to Linger
	// longer.
	Linger time.Duration
	// ClaimIdle is how long a task_URL entry read by another host may
	// stay unacknowledged before this host takes it over; default 30 s.
	ClaimIdle time.Duration
	// Limits cap the frames the host reads.
	Limits *Limits
	// Logf says what went wrong and what was refused; default: nothing.
	Logf func(format string, args ...any)
}

// Host is the paper's host: it submits what its crawler extracted
// (URL_pool, less what its finish_URL holds) to its network's centre,
// answers the centre's requests from its finish_URL, and moves the new
// URLs the centre hands out (task_URL) into its finish_URL and its
// task_pool, where its crawlers claim them.
type Host struct {
	top  *Topology
	net  *Network
	me   Node
	k    keys
	own  *redis.Client // the host's Redis
	cent *redis.Client // its centre's
	seen Seen
	opt  HostOptions
	lim  Limits
	st   Stats

	pendingRead bool // the entries this host read before it stopped are fed again
	lastClaim   time.Time
	waiting     time.Time // when URL_pool was first seen too short to fill a frame
}

// NewHost returns the host at ip in top, whose finish_URL is seen. It
// connects lazily; Start makes the streams and groups.
func NewHost(top *Topology, ip netip.Addr, seen Seen, opts *HostOptions) (*Host, error) {
	n, role := top.Find(ip)
	if role != HostRole {
		return nil, fmt.Errorf("%w: %s is no host of the topology", ErrTopology, ip)
	}
	h := &Host{top: top, net: n, k: keys(top.prefix()), seen: seen}
	for _, hn := range n.Hosts {
		if hn.IP == ip {
			h.me = hn
		}
	}
	if opts != nil {
		h.opt = *opts
	}
	if h.opt.FrameURLs <= 0 {
		h.opt.FrameURLs = 1000
	}
	if h.opt.ClaimIdle <= 0 {
		h.opt.ClaimIdle = 30 * time.Second
	}
	if h.opt.Logf == nil {
		h.opt.Logf = func(string, ...any) {}
	}
	if h.opt.Limits != nil {
		h.lim = *h.opt.Limits
	}
	h.lim = h.lim.withDefaults()
	h.opt.FrameURLs = min(h.opt.FrameURLs, h.lim.MaxURLs)
	var err error
	if h.own, err = dial(h.me.Redis); err != nil {
		return nil, err
	}
	if h.cent, err = dial(n.Centre.Redis); err != nil {
		h.own.Close()
		return nil, err
	}
	return h, nil
}

// Stats returns the host's counts.
func (h *Host) Stats() *Stats { return &h.st }

// Close closes the host's connections (not its finish_URL).
func (h *Host) Close() error {
	return errors.Join(h.own.Close(), h.cent.Close())
}

// Start makes the task streams and their consumer groups where they are
// missing: task_pool and its crawlers' group here, task_URL and its
// hosts' group at the centre.
func (h *Host) Start(ctx context.Context) error {
	if err := group(ctx, h.own, h.k.of(keyTaskPool), CrawlersGroup); err != nil {
		return err
	}
	return group(ctx, h.cent, h.k.of(keyTaskURL), HostsGroup)
}

// Run starts the host and serves until ctx ends: submissions, answers and
// hand-outs each in a loop of its own. A Redis that cannot be reached is
// tried again, after a pause, until ctx ends.
func (h *Host) Run(ctx context.Context) error {
	if err := h.Start(ctx); err != nil {
		return err
	}
	loops := []func(context.Context) (bool, error){
		func(ctx context.Context) (bool, error) {
			n, err := h.Submit(ctx)
			if n == 0 && err == nil {
				sleep(ctx, 50*time.Millisecond)
			}
			return n > 0, err
		},
		func(ctx context.Context) (bool, error) { return h.Answer(ctx, block) },
		func(ctx context.Context) (bool, error) { n, err := h.Feed(ctx, block); return n > 0, err },
	}
	done := make(chan struct{}, len(loops))
	for _, loop := range loops {
		go func() {
			defer func() { done <- struct{}{} }()
			serve(ctx, loop, h.opt.Logf)
		}()
	}
	for range loops {
		<-done
	}
	return nil
}

// serve calls step until ctx ends, pausing after an error (a tenth of a
// second, doubling to two).
func serve(ctx context.Context, step func(context.Context) (bool, error), logf func(string, ...any)) {
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		if _, err := step(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			logf("%v (trying again in %v)", err, pause)
			sleep(ctx, pause)
			pause = min(2*pause, 2*time.Second)
			continue
		}
		pause = 100 * time.Millisecond
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Submit takes up to FrameURLs URLs from URL_pool, drops those its
// finish_URL holds (and repeats and URLs no frame can carry), and
// submits the rest to the centre as one frame. It returns how many URLs
// it took; they leave URL_pool only once the frame is sent. With Linger,
// it takes nothing until URL_pool fills a frame or has held URLs for
// Linger.
func (h *Host) Submit(ctx context.Context) (int, error) {
	if h.opt.Linger > 0 {
		n, err := h.own.LLen(ctx, h.k.of(keyURLPool)).Result()
		if err != nil {
			return 0, fmt.Errorf("%w: %s: URL_pool: %v", ErrUnavailable, h.me.IP, err)
		}
		switch {
		case n == 0:
			h.waiting = time.Time{}
			return 0, nil
		case n < int64(h.opt.FrameURLs) && h.waiting.IsZero():
			h.waiting = time.Now()
			return 0, nil
		case n < int64(h.opt.FrameURLs) && time.Since(h.waiting) < h.opt.Linger:
			return 0, nil
		}
		h.waiting = time.Time{}
	}
	urls, err := h.own.LRange(ctx, h.k.of(keyURLPool), 0, int64(h.opt.FrameURLs-1)).Result()
	if err != nil {
		return 0, fmt.Errorf("%w: %s: URL_pool: %v", ErrUnavailable, h.me.IP, err)
	}
	if len(urls) == 0 {
		return 0, nil
	}
	dup := make([]bool, len(urls))
	if err := h.seen.Check(ctx, urls, dup); err != nil {
		return 0, fmt.Errorf("%s: finish_URL: %w", h.me.IP, err)
	}
	keep := make([]string, 0, len(urls))
	inFrame := make(map[string]bool, len(urls))
	for i, u := range urls {
		switch {
		case u == "" || len(u) > h.lim.MaxURL:
			h.st.add(Malformed, 1)
			h.opt.Logf("URL_pool: a URL of %d bytes dropped (1 to %d)", len(u), h.lim.MaxURL)
		case dup[i]:
			h.st.add(URLsLocalDup, 1)
		case !inFrame[u]:
			inFrame[u] = true
			keep = append(keep, u)
		}
	}
	if len(keep) > 0 {
		seq, err := h.own.Incr(ctx, h.k.of(keySeq)).Result()
		if err != nil {
			return 0, fmt.Errorf("%w: %s: %v", ErrUnavailable, h.me.IP, err)
		}
		f := &Frame{URLs: keep, IP: h.me.IP, Number: h.number(seq), Flag: Submit}
		if err := send(ctx, h.cent, h.k, f, &h.st); err != nil {
			return 0, err
		}
		h.st.add(URLsSubmitted, len(keep))
	}
	if err := h.own.LTrim(ctx, h.k.of(keyURLPool), int64(len(urls)), -1).Err(); err != nil {
		return 0, fmt.Errorf("%w: %s: URL_pool: %v", ErrUnavailable, h.me.IP, err)
	}
	h.st.add(URLsTaken, len(urls))
	return len(urls), nil
}

// number names the host's seq-th frame uniquely in the system: its
// network, its address, the counter in its Redis.
func (h *Host) number(seq int64) string {
	return h.net.Name + "/" + h.me.IP.String() + "/" + strconv.FormatInt(seq, 10)
}

// Answer handles the next frame of the host's inbox, waiting for one at
// most wait: a request is answered, with the URLs its finish_URL holds
// marked; a request of its own is dropped (the paper's rule); anything
// else is refused and counted. It reports whether there was a frame.
func (h *Host) Answer(ctx context.Context, wait time.Duration) (bool, error) {
	b, err := inbox(ctx, h.own, h.k, wait)
	if b == nil {
		return false, err
	}
	f, err := Decode(b, &h.lim)
	switch {
	case err != nil:
		h.st.add(Malformed, 1)
		h.opt.Logf("%s: inbox: %v", h.me.IP, err)
	case f.Flag != Request:
		h.st.add(Strangers, 1)
		h.opt.Logf("%s: inbox: frame %s from %s is a %s; a host answers requests only", h.me.IP, f.Number, f.IP, f.Flag)
	case f.IP == h.me.IP:
		h.st.add(OwnDropped, 1)
	default:
		if _, role := h.top.Find(f.IP); role != HostRole {
			h.st.add(Strangers, 1)
			h.opt.Logf("%s: inbox: request %s names %s, no host of the topology", h.me.IP, f.Number, f.IP)
			break
		}
		dup := make([]bool, len(f.URLs))
		if err := h.seen.Check(ctx, f.URLs, dup); err != nil {
			return true, fmt.Errorf("%s: finish_URL: %w", h.me.IP, err)
		}
		held := 0
		for i := range dup {
			if dup[i] || f.IsHeld(i) {
				dup[i] = true
				held++
			}
		}
		f.Held, f.Flag, f.IP = dup, Answer, h.me.IP
		if err := send(ctx, h.cent, h.k, f, &h.st); err != nil {
			return true, err
		}
		h.st.add(Answered, 1)
		h.st.add(URLsHeld, held)
	}
	return true, handled(ctx, h.own, h.k)
}

// Feed reads the next entries of the centre's task_URL for this host
// (waiting at most wait), and for each URL its finish_URL does not hold
// yet, adds it to task_pool and then to finish_URL; then it acknowledges
// the entries. Entries another host left unacknowledged for ClaimIdle
// are taken over first. It returns how many entries it handled.
func (h *Host) Feed(ctx context.Context, wait time.Duration) (int, error) {
	if time.Since(h.lastClaim) >= h.opt.ClaimIdle/2 {
		msgs, _, err := h.cent.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: h.k.of(keyTaskURL), Group: HostsGroup, Consumer: h.me.IP.String(),
			MinIdle: h.opt.ClaimIdle, Start: "0-0", Count: 256,
		}).Result()
		if err != nil {
			return 0, fmt.Errorf("%w: %s: task_URL: XAUTOCLAIM: %v", ErrUnavailable, h.me.IP, err)
		}
		if len(msgs) > 0 {
			h.st.add(TasksClaimed, len(msgs))
			return len(msgs), h.feed(ctx, msgs)
		}
		h.lastClaim = time.Now()
	}
	id := ">"
	if !h.pendingRead {
		id = "0" // first what this host read and did not acknowledge before
	}
	args := &redis.XReadGroupArgs{Group: HostsGroup, Consumer: h.me.IP.String(),
		Streams: []string{h.k.of(keyTaskURL), id}, Count: 256, Block: wait}
	if id == "0" || wait <= 0 {
		args.Block = -1 // no BLOCK (0 would wait for ever); the pending entries are there or not
	}
	res, err := h.cent.XReadGroup(ctx, args).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %s: task_URL: %v", ErrUnavailable, h.me.IP, err)
	}
	var msgs []redis.XMessage
	for _, s := range res {
		msgs = append(msgs, s.Messages...)
	}
	if id == "0" && len(msgs) == 0 {
		h.pendingRead = true
	}
	return len(msgs), h.feed(ctx, msgs)
}

// feed moves the URLs of msgs that finish_URL does not hold into
// task_pool, records them in finish_URL, and acknowledges msgs. It adds
// before it records, so a host that stops in between feeds them again
// (at least once), never not at all.
func (h *Host) feed(ctx context.Context, msgs []redis.XMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	urls := make([]string, 0, len(msgs))
	idx := make([]int, 0, len(msgs))
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
		u, _ := m.Values["url"].(string)
		if u == "" {
			h.st.add(Malformed, 1)
			h.opt.Logf("%s: task_URL: entry %s has no url", h.me.IP, m.ID)
			continue
		}
		urls = append(urls, u)
		idx = append(idx, i)
	}
	dup := make([]bool, len(urls))
	if err := h.seen.Check(ctx, urls, dup); err != nil {
		return fmt.Errorf("%s: finish_URL: %w", h.me.IP, err)
	}
	fresh := urls[:0:0]
	pipe := h.own.Pipeline()
	for j, u := range urls {
		if dup[j] {
			h.st.add(TasksDup, 1)
			continue
		}
		fresh = append(fresh, u)
		values := map[string]any{"url": u}
		for _, f := range []string{"number", "submitted", "missing"} {
			if v, ok := msgs[idx[j]].Values[f]; ok {
				values[f] = v
			}
		}
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: h.k.of(keyTaskPool), Values: values})
	}
	if len(fresh) > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("%w: %s: task_pool: %v", ErrUnavailable, h.me.IP, err)
		}
		if err := h.seen.Decide(ctx, fresh, make([]bool, len(fresh))); err != nil {
			return fmt.Errorf("%s: finish_URL: %w", h.me.IP, err)
		}
		h.st.add(TasksFed, len(fresh))
	}
	if err := h.cent.XAck(ctx, h.k.of(keyTaskURL), HostsGroup, ids...).Err(); err != nil {
		return fmt.Errorf("%w: %s: task_URL: XACK: %v", ErrUnavailable, h.me.IP, err)
	}
	return nil
}
