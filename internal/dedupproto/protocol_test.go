package dedupproto_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd"
	"github.com/urldedupd/urldedupd/internal/dedupproto"
	"github.com/urldedupd/urldedupd/internal/redistest"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// URLs extracted by several hosts of several networks, submitted one host
// after another (never overlapping in time): each reaches exactly one task
// pool, and a URL extracted again later reaches none.
func TestProtocolSequential(t *testing.T) {
	const nets, hostsPer, universe, each = 3, 2, 400, 120
	s := newSystem(t, nets, hostsPer, 10*time.Second)
	s.run()
	r := rand.New(rand.NewPCG(1, 2))
	want := map[string]bool{}
	for round := 0; round < 2; round++ {
		for i := 1; i <= nets; i++ {
			for j := 1; j <= hostsPer; j++ {
				urls := make([]string, each)
				for k := range urls {
					// Overlap between hosts and networks, and repeats
					// within one host's batch.
					urls[k] = fmt.Sprintf("http://site%d.example/page/%d", r.IntN(7), r.IntN(universe))
					want[urls[k]] = true
				}
				s.push(host(i, j), urls...)
				s.quiet()
			}
		}
	}
	where, _ := s.tasks()
	lost, twice, strange := count(where, want)
	t.Logf("%d URLs extracted, %d in task pools", len(want), len(where))
	if lost != 0 || twice != 0 || strange != 0 {
		t.Errorf("%d URLs lost, %d handed out twice, %d not extracted", lost, twice, strange)
	}
	for ip, c := range s.centres {
		st := c.Stats()
		if st.Get(dedupproto.Deadlines) != 0 || st.Get(dedupproto.Malformed) != 0 || st.Get(dedupproto.Strangers) != 0 {
			t.Errorf("centre %s: %d deadlines, %d malformed, %d strangers", ip,
				st.Get(dedupproto.Deadlines), st.Get(dedupproto.Malformed), st.Get(dedupproto.Strangers))
		}
	}
	removed := uint64(0)
	for _, c := range s.centres {
		removed += c.Stats().Get(dedupproto.URLsRemoved)
	}
	if removed == 0 {
		t.Error("no URL was removed by another host's or network's answer: the test did not test the protocol")
	}
}

// A host that never answers: the frame is completed at its deadline, the
// URLs handed out say who did not answer, the centre counts it, and the
// answer that comes later is counted late. A host whose Redis cannot be
// reached at all is a send failure, completed the same way.
func TestProtocolDeadline(t *testing.T) {
	s := newSystem(t, 1, 3, 300*time.Millisecond)
	silent := host(1, 3)
	s.run(silent)
	urls := []string{"http://a.example/1", "http://a.example/2"}
	s.push(host(1, 1), urls...)
	s.quiet(silent)
	where, msgs := s.tasks()
	if lost, twice, _ := count(where, map[string]bool{urls[0]: true, urls[1]: true}); lost != 0 || twice != 0 {
		t.Fatalf("%d lost, %d twice", lost, twice)
	}
	for _, m := range msgs {
		if m.Values["missing"] != silent.String() {
			t.Errorf("entry %v: missing is %v, want %s", m.Values, m.Values["missing"], silent)
		}
	}
	c := s.centres[centre(1)]
	if n := c.Stats().Get(dedupproto.Deadlines); n != 1 {
		t.Errorf("%d frames completed at their deadline, want 1", n)
	}
	// The silent host wakes up and answers: too late.
	s.start(s.hosts[silent].Run)
	waitFor(t, "the late answer counted", func() bool { return c.Stats().Get(dedupproto.LateAnswers) == 1 })
	s.quiet()

	// A host whose Redis is gone.
	t.Run("unreachable", func(t *testing.T) {
		top := *s.top
		top.Networks = append([]dedupproto.Network(nil), s.top.Networks...)
		n := &top.Networks[0]
		n.Hosts = append(n.Hosts, dedupproto.Node{IP: host(1, 9), Redis: fmt.Sprintf("redis://127.0.0.1:%d/0", redistest.FreePort(t))})
		c2, err := dedupproto.NewCentre(&top, centre(1), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		s.extra = append(s.extra, c2)
		s.halt()
		s.run(centre(1)) // the hosts, and c2 in place of the centre
		s.start(c2.Run)
		s.push(host(1, 2), "http://a.example/3")
		s.quiet(host(1, 9))
		waitFor(t, "a send failure counted", func() bool { return c2.Stats().Get(dedupproto.SendFailures) >= 1 })
		if n := c2.Stats().Get(dedupproto.Deadlines); n != 1 {
			t.Errorf("%d deadlines, want 1", n)
		}
		where, _ := s.tasks()
		if len(where["http://a.example/3"]) != 1 {
			t.Errorf("the URL is in %d task pools, want 1", len(where["http://a.example/3"]))
		}
	})
}

// Malformed frames and frames from where they cannot come are refused and
// counted, and the nodes go on.
func TestProtocolRefuses(t *testing.T) {
	s := newSystem(t, 2, 2, 5*time.Second)
	s.run()
	ctx := context.Background()
	toCentre := []string{
		`not json`,
		`{"url_set":{"http://x/":0},"ip":"10.1.0.2","number":"a","flag":9}`,               // flag
		`{"url_set":{"http://x/":0,"http://x/":1},"ip":"10.1.0.2","number":"b","flag":3}`, // a URL twice
		`{"url_set":{"http://x/":0},"ip":"10.9.9.9","number":"c","flag":1}`,               // no node of the topology
		`{"url_set":{"http://x/":0},"ip":"10.2.0.2","number":"d","flag":1}`,               // another network's host submits here
		`{"url_set":{"http://x/":0},"ip":"10.1.0.1","number":"e","flag":2}`,               // a centre's own address in a request
		`{"url_set":{"http://x/":1},"ip":"10.1.0.3","number":"never-asked","flag":3}`,     // an answer to nothing
	}
	for _, b := range toCentre {
		if err := s.db[centre(1)].RPush(ctx, "dedup:inbox", b).Err(); err != nil {
			t.Fatal(err)
		}
	}
	toHost := []string{
		`{"url_set":{"http://x/":0},"ip":"10.1.0.3","number":"f","flag":1}`, // a submission, sent to a host
		`{"url_set":{"http://x/":0}`,                                        // cut short
		`{"url_set":{"http://x/":0},"ip":"10.7.0.7","number":"g","flag":2}`, // a request naming no host
	}
	for _, b := range toHost {
		if err := s.db[host(1, 1)].RPush(ctx, "dedup:inbox", b).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s.push(host(1, 1), "http://after.example/")
	s.quiet()
	where, _ := s.tasks()
	if len(where["http://after.example/"]) != 1 {
		t.Errorf("the URL submitted after the refused frames is in %d task pools, want 1", len(where["http://after.example/"]))
	}
	c, h := s.centres[centre(1)].Stats(), s.hosts[host(1, 1)].Stats()
	for _, x := range []struct {
		who  string
		st   *dedupproto.Stats
		c    dedupproto.Counter
		want uint64
	}{
		{"centre", c, dedupproto.Malformed, 3},
		{"centre", c, dedupproto.Strangers, 3},
		{"centre", c, dedupproto.LateAnswers, 1},
		{"host", h, dedupproto.Malformed, 1},
		{"host", h, dedupproto.Strangers, 2},
	} {
		if got := x.st.Get(x.c); got != x.want {
			t.Errorf("%s %s: %d, want %d", x.who, x.c, got, x.want)
		}
	}
}

// The same new URL submitted by two networks at the same moment: the
// paper's protocol hands it out in both networks (each network's check
// runs before either hands it out, and finish_URL only learns a URL when
// it is handed out); urldedupd's design, one test-and-set in a shared
// state, answers it new once.
func TestProtocolConcurrentNetworks(t *testing.T) {
	s := newSystem(t, 2, 1, time.Hour)
	ctx := context.Background()
	const u = "http://both.example/"
	a, b := s.hosts[host(1, 1)], s.hosts[host(2, 1)]
	for _, h := range []*dedupproto.Host{a, b} {
		if err := h.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range s.centres {
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s.push(host(1, 1), u)
	s.push(host(2, 1), u)
	// Both submit before either frame is handled: "the same moment".
	for _, h := range []*dedupproto.Host{a, b} {
		if n, err := h.Submit(ctx); n != 1 || err != nil {
			t.Fatalf("submit: %d, %v", n, err)
		}
	}
	// Every node steps until nothing moves (bounded).
	for i := 0; ; i++ {
		if i == 1000 {
			t.Fatal("still moving after 1,000 rounds")
		}
		moved := false
		for _, c := range s.centres {
			ok, err := c.Step(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			sent, err := c.Flush(ctx)
			if err != nil {
				t.Fatal(err)
			}
			moved = moved || ok || sent > 0
		}
		for _, h := range []*dedupproto.Host{a, b} {
			ok, err := h.Answer(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			moved = moved || ok
		}
		if !moved {
			break
		}
	}
	for _, h := range []*dedupproto.Host{a, b} {
		if _, err := h.Feed(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Feed(ctx, 0); err != nil { // past the pending entries, the new ones
			t.Fatal(err)
		}
	}
	where, _ := s.tasks()
	if got := len(where[u]); got != 2 {
		t.Errorf("the paper's protocol: the URL is in %d task pools; it lets it through in both networks (2)", got)
	}

	// urldedupd's design: both networks ask one shared state at once.
	shared, err := urldedupd.Open(ctx, redistest.Server(t), &urldedupd.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	const rounds = 50
	twice, lost := 0, 0
	for r := 0; r < rounds; r++ {
		url := fmt.Sprintf("http://both.example/%d", r)
		var news [2]bool
		var wg sync.WaitGroup
		start := make(chan struct{})
		for k := range news {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				dup := make([]bool, 1)
				if err := shared.Decide(ctx, []string{url}, dup); err != nil {
					t.Error(err)
				}
				news[k] = !dup[0]
			}()
		}
		close(start)
		wg.Wait()
		switch {
		case news[0] && news[1]:
			twice++
		case !news[0] && !news[1]:
			lost++
		}
	}
	if twice != 0 || lost != 0 {
		t.Errorf("urldedupd's design: of %d URLs asked by two networks at once, %d new twice, %d never new", rounds, twice, lost)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not %s after 30 s", what)
		}
	}
}

// With Linger, a host submits a full frame at once, and a short one only
// once URL_pool has held URLs for Linger.
func TestHostLinger(t *testing.T) {
	s := newSystem(t, 1, 1, time.Hour)
	ctx := context.Background()
	me := s.top.Networks[0].Hosts[0].IP
	host := func(linger time.Duration) *dedupproto.Host {
		h, err := dedupproto.NewHost(s.top, me, dedupproto.FinishURL(statetest.Bitmap(t)),
			&dedupproto.HostOptions{FrameURLs: 10, Linger: linger})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	long, short := host(time.Hour), host(50*time.Millisecond)
	urls := func(from, n int) []string {
		var us []string
		for i := from; i < from+n; i++ {
			us = append(us, fmt.Sprintf("http://linger.example/%d", i))
		}
		return us
	}
	submit := func(h *dedupproto.Host, want int) {
		t.Helper()
		if n, err := h.Submit(ctx); n != want || err != nil {
			t.Fatalf("Submit took %d URLs (%v), want %d", n, err, want)
		}
	}
	s.push(me, urls(0, 3)...)
	submit(long, 0) // short of a frame: waits
	submit(long, 0)
	s.push(me, urls(3, 7)...)
	submit(long, 10) // a frame: at once
	s.push(me, urls(10, 2)...)
	submit(long, 0)
	submit(short, 0)                   // starts waiting
	time.Sleep(100 * time.Millisecond) // past its linger
	submit(short, 2)
	submit(short, 0) // nothing left
}

// A host's answer that comes after its network's deadline, while the frame
// is with the other networks, is counted late (not a repeat), and changes
// nothing.
func TestProtocolLateLocalAnswer(t *testing.T) {
	s := newSystem(t, 2, 2, time.Second)
	ctx := context.Background()
	var now time.Time = time.Unix(1_800_000_000, 0)
	c, err := dedupproto.NewCentre(s.top, centre(1), &dedupproto.CentreOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, slow := s.hosts[host(1, 1)], s.hosts[host(1, 2)]
	for _, h := range []*dedupproto.Host{a, slow} {
		if err := h.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	step := func() {
		t.Helper()
		if _, err := c.Step(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s.push(host(1, 1), "http://late.example/")
	if n, err := a.Submit(ctx); n != 1 || err != nil {
		t.Fatalf("submit: %d, %v", n, err)
	}
	step()                                 // asks the slow host
	now = now.Add(1100 * time.Millisecond) // its deadline passes
	step()                                 // on to network 2
	if ok, err := slow.Answer(ctx, 0); !ok || err != nil {
		t.Fatalf("the slow host has no request to answer: %v", err)
	}
	step() // its answer
	st := c.Stats()
	if st.Get(dedupproto.Deadlines) != 1 || st.Get(dedupproto.LateAnswers) != 1 || st.Get(dedupproto.Repeats) != 0 {
		t.Errorf("deadlines %d, late answers %d, repeats %d; want 1, 1, 0",
			st.Get(dedupproto.Deadlines), st.Get(dedupproto.LateAnswers), st.Get(dedupproto.Repeats))
	}
}

// The outbox of a peer that cannot be reached keeps its newest frames, at
// most 10,000, and counts the ones it drops.
func TestOutboxCap(t *testing.T) {
	s := newSystem(t, 1, 1, time.Hour)
	ctx := context.Background()
	top := *s.top
	top.Networks = append([]dedupproto.Network(nil), s.top.Networks...)
	gone := host(1, 9)
	top.Networks[0].Hosts = append(top.Networks[0].Hosts, dedupproto.Node{IP: gone, Redis: fmt.Sprintf("redis://127.0.0.1:%d/0", redistest.FreePort(t))})
	c, err := dedupproto.NewCentre(&top, centre(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const over = 10_005
	key := "dedup:outbox:" + gone.String()
	frames := make([]any, over)
	for i := range frames {
		frames[i] = fmt.Sprintf(`{"url_set":{"http://cap.example/%d":0},"ip":"10.1.0.2","number":"n1/10.1.0.2/%d","flag":2}`, i, i)
	}
	db := s.db[centre(1)]
	if err := db.RPush(ctx, key, frames...).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Flush(ctx); err == nil {
		t.Fatal("frames to an unreachable peer were sent")
	}
	if n, _ := db.LLen(ctx, key).Result(); n != 10_000 {
		t.Errorf("the outbox holds %d frames, want 10,000", n)
	}
	if first, _ := db.LIndex(ctx, key, 0).Result(); first != frames[over-10_000] {
		t.Errorf("the outbox starts with %.80s, want the newest 10,000", first)
	}
	if n := c.Stats().Get(dedupproto.OutboxDropped); n != over-10_000 {
		t.Errorf("%d frames counted dropped, want %d", n, over-10_000)
	}
}
