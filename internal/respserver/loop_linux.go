package respserver

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/urldedupd/urldedupd/internal/resp"
)

// The event loop: the connections served from one goroutine, with epoll
// and nonblocking reads and writes, as redis-server serves its clients.
// A goroutine for each connection costs, for every single command, a
// read that finds nothing and parks the goroutine, the runtime's poller
// waking it and a hand-off between threads: measured on two cores, with
// no flush, 0.76–0.92× redis-server's single commands a second, the
// loop 0.92–1.06× (docs/BENCHMARKS.md). The loop reads once for each time epoll says a
// connection is readable, answers every complete command read, and
// writes the replies in one write; a reply the client does not take is
// kept, and the connection is not read until it has gone out.

// loop serves connections handed to it by the accepting goroutines.
type evLoop struct {
	f    *FrontEnd
	epfd int
	wake int // an eventfd: a connection added, Drain, Shutdown's end of grace

	mu    sync.Mutex
	added []*conn // accepted, for the loop to register; guarded by mu
	kill  bool    // close every connection now; guarded by mu

	conns   map[int]*conn // by descriptor; the loop's goroutine only
	events  []unix.EpollEvent
	drained bool   // the loop has acted on Drain
	dropped []byte // what a lingering connection sends
}

// evConn is a connection's state in its loop.
type evConn struct {
	fd       int
	ready    bool      // epoll said readable and the Reader has not read since
	events   uint32    // the interest registered
	wrote    int       // bytes of the connection's replies written
	outSince time.Time // when a write first could not finish; zero: nothing waits
	active   time.Time // the last bytes read, for the idle timeout
	begun    time.Time // when a command was first seen unfinished
	end      ending
	lingerBy time.Time
	left     int // bytes a lingering connection may still send
}

// ending is what happens to a connection once its replies are out.
type ending uint8

const (
	goOn      ending = iota
	endClose         // QUIT, the client left, Drain
	endLinger        // an error was the last reply: half-close and linger
	lingering        // half-closed: reading and dropping until lingerBy
)

// errAgain is the loop's Reader's "nothing more to read now".
var errAgain = errors.New("respserver: would block")

// Read reads once for each readable event: a second read would mostly
// find nothing (one more system call for every single command), and
// epoll reports what remains.
func (e *evConn) Read(p []byte) (int, error) {
	if !e.ready {
		return 0, errAgain
	}
	e.ready = false
	for {
		n, err := unix.Read(e.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, errAgain
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// loopCount is how many loops a front end runs: Options.Loops, else one
// for two processors, the other left to the clients and the rest of the
// process, as redis-server's one thread.
func (f *FrontEnd) loopCount() int {
	if f.opts.Loops > 0 {
		return f.opts.Loops
	}
	return max(1, runtime.GOMAXPROCS(0)/2)
}

// newLoop returns a loop, or an error when epoll or eventfd cannot be
// had (the front end then serves each connection from a goroutine).
func newLoop(f *FrontEnd) (*evLoop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, os.NewSyscallError("eventfd", err)
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)}); err != nil {
		unix.Close(epfd)
		unix.Close(wake)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	return &evLoop{f: f, epfd: epfd, wake: wake, conns: map[int]*conn{}, events: make([]unix.EpollEvent, 256)}, nil
}

// adopt takes c's descriptor out of Go's poller for the loop: it returns
// a connection to add, or nil when c has no descriptor (it is then
// served by a goroutine).
func (l *evLoop) adopt(c net.Conn) *conn {
	raw := c
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok {
		raw = nc.NetConn()
	}
	sc, ok := raw.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil || derr != nil {
		return nil
	}
	raw.Close() // out of Go's poller; the copy holds the socket (c's Close gives the slot back later)
	cn := l.f.newConn(c)
	cn.ev = &evConn{fd: fd}
	cn.r = resp.NewReader(cn.ev, l.f.readerLimits(), l.f.budget)
	return cn
}

// discard closes a connection adopted but not added (Shutdown began).
func (l *evLoop) discard(cn *conn) {
	unix.Close(cn.ev.fd)
	cn.c.Close()
}

// add hands a connection to the loop.
func (l *evLoop) add(cn *conn) {
	l.mu.Lock()
	l.added = append(l.added, cn)
	l.mu.Unlock()
	l.poke()
}

// poke wakes the loop.
func (l *evLoop) poke() {
	var one = [8]byte{1}
	unix.Write(l.wake, one[:])
}

// closeAll makes the loop close every connection, for Shutdown when its
// grace has passed.
func (l *evLoop) closeAll() {
	l.mu.Lock()
	l.kill = true
	l.mu.Unlock()
	l.poke()
}

// tick is how often the loop looks at the connections' clocks: a
// sixteenth of the shortest timeout, from 5 ms to a second.
func (l *evLoop) tick() time.Duration {
	t := l.f.opts.CommandTimeout
	if it := l.f.opts.IdleTimeout; it > 0 && it < t {
		t = it
	}
	return min(max(t/16, 5*time.Millisecond), time.Second)
}

// run serves the loop's connections until Shutdown has begun and every
// one has closed.
func (l *evLoop) run() {
	defer l.f.wg.Done()
	defer unix.Close(l.wake)
	defer unix.Close(l.epfd)
	tick := l.tick()
	scanned := time.Now()
	for {
		n, err := epollPoll(l.epfd, l.events)
		if n == 0 && err == nil {
			n, err = unix.EpollWait(l.epfd, l.events, int(tick/time.Millisecond))
		}
		if err != nil && err != unix.EINTR {
			l.f.log.Error("RESP event loop: epoll_wait failed, closing its connections", "err", err)
			l.closeConns()
			return
		}
		now := time.Now()
		for _, ev := range l.events[:max(n, 0)] {
			fd := int(ev.Fd)
			if fd == l.wake {
				l.woken(now)
				continue
			}
			if cn := l.conns[fd]; cn != nil {
				l.event(cn, ev.Events, now)
			}
		}
		if l.f.draining.Load() && !l.drained {
			l.drained = true
			for _, cn := range l.conns {
				l.drain(cn, now)
			}
		}
		if now.Sub(scanned) >= tick {
			scanned = now
			l.scan(now)
		}
		if len(l.conns) == 0 && l.over() {
			return
		}
	}
}

// over reports whether Shutdown has begun and nothing waits to be added:
// no connection can come to the loop any more.
func (l *evLoop) over() bool {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.closing && len(l.added) == 0
}

// woken registers the connections added, and closes them all when told.
func (l *evLoop) woken(now time.Time) {
	var b [8]byte
	unix.Read(l.wake, b[:])
	l.mu.Lock()
	added, kill := l.added, l.kill
	l.added = nil
	l.mu.Unlock()
	for _, cn := range added {
		e := cn.ev
		e.active, e.events = now, unix.EPOLLIN|unix.EPOLLRDHUP
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, e.fd, &unix.EpollEvent{Events: e.events, Fd: int32(e.fd)}); err != nil {
			l.f.log.Warn("RESP event loop: cannot watch a connection", "err", err)
			l.conns[e.fd] = cn
			l.close(cn)
			continue
		}
		l.conns[e.fd] = cn
		if l.drained {
			l.drain(cn, now)
		}
	}
	if kill {
		l.closeConns()
	}
}

func (l *evLoop) closeConns() {
	for _, cn := range l.conns {
		l.close(cn)
	}
}

// event acts on what epoll reported of a connection.
func (l *evLoop) event(cn *conn, events uint32, now time.Time) {
	e := cn.ev
	switch {
	case e.end == lingering:
		l.linger(cn)
	case !e.outSince.IsZero(): // waiting to write: read nothing meanwhile
		if events&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			l.close(cn)
			return
		}
		l.flush(cn, now)
	default:
		l.read(cn, now)
	}
}

// read reads once, answers every complete command read, and writes the
// replies.
func (l *evLoop) read(cn *conn, now time.Time) {
	e := cn.ev
	e.ready, e.active = true, now
	for !cn.quit {
		cmds, err := cn.r.ReadCommands()
		if err == errAgain {
			break
		}
		if err != nil {
			l.fail(cn, err, now)
			return
		}
		cn.answer(context.Background(), cmds)
		cn.observe(time.Since(now))
		cn.answered()
		e.begun = time.Time{} // a command left unfinished is a new one: its clock starts now
	}
	e.ready = false
	switch {
	case cn.quit:
		e.end = endClose
	case cn.r.Pending() == 0:
		e.begun = time.Time{}
	case e.begun.IsZero():
		e.begun = now
	}
	l.flush(cn, now)
}

// fail answers a read that failed as the goroutine's failed does: an
// error reply, then a half-close and a moment of lingering; or a close.
func (l *evLoop) fail(cn *conn, err error, now time.Time) {
	reply := cn.failReply(err)
	cn.r.Release()
	cn.ev.begun = time.Time{}
	if reply == "" {
		cn.ev.end = endClose
	} else {
		cn.w.Error(reply)
		cn.ev.end = endLinger
	}
	l.flush(cn, now)
}

// flush writes what the connection's replies hold; what the client does
// not take now waits for epoll to say it can.
func (l *evLoop) flush(cn *conn, now time.Time) {
	e := cn.ev
	for b := cn.w.Bytes(); e.wrote < len(b); {
		n, err := unix.Write(e.fd, b[e.wrote:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if e.outSince.IsZero() {
				e.outSince = now
			}
			l.watch(cn, unix.EPOLLOUT)
			return
		case err != nil:
			l.close(cn)
			return
		}
		e.wrote += n
	}
	e.wrote, e.outSince = 0, time.Time{}
	cn.w.Reset(keepReply)
	switch e.end {
	case endClose:
		l.close(cn)
	case endLinger:
		if unix.Shutdown(e.fd, unix.SHUT_WR) != nil {
			l.close(cn)
			return
		}
		e.end, e.lingerBy, e.left = lingering, now.Add(lingerTime), lingerBytes
		l.watch(cn, unix.EPOLLIN|unix.EPOLLRDHUP)
	default:
		l.watch(cn, unix.EPOLLIN|unix.EPOLLRDHUP)
	}
}

// linger reads and drops what a half-closed connection still sends, and
// closes it at its end or when enough has come.
func (l *evLoop) linger(cn *conn) {
	e := cn.ev
	if l.dropped == nil {
		l.dropped = make([]byte, 64<<10)
	}
	n, err := unix.Read(e.fd, l.dropped)
	switch {
	case err == unix.EINTR || err == unix.EAGAIN:
	case err != nil || n == 0:
		l.close(cn)
	default:
		if e.left -= n; e.left <= 0 {
			l.close(cn)
		}
	}
}

// watch sets the events the loop waits for on a connection.
func (l *evLoop) watch(cn *conn, events uint32) {
	e := cn.ev
	if e.events == events {
		return
	}
	e.events = events
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, e.fd, &unix.EpollEvent{Events: events, Fd: int32(e.fd)}); err != nil {
		l.close(cn)
	}
}

// drain ends a connection for Drain: its replies go out, a command still
// arriving is refused, then it closes.
func (l *evLoop) drain(cn *conn, now time.Time) {
	e := cn.ev
	switch {
	case e.end != goOn:
	case !e.outSince.IsZero():
		e.end = endClose
	case cn.r.Pending() > 0:
		l.fail(cn, errDraining, now)
	default:
		l.close(cn)
	}
}

// scan applies the timeouts: a reply not taken and a command not
// complete within CommandTimeout, an idle connection after IdleTimeout,
// a lingering one after lingerTime.
func (l *evLoop) scan(now time.Time) {
	o := &l.f.opts
	for _, cn := range l.conns {
		e := cn.ev
		switch {
		case e.end == lingering:
			if now.After(e.lingerBy) {
				l.close(cn)
			}
		case !e.outSince.IsZero():
			if now.Sub(e.outSince) > o.CommandTimeout {
				l.close(cn)
			}
		case !e.begun.IsZero():
			if now.Sub(e.begun) > o.CommandTimeout {
				l.fail(cn, os.ErrDeadlineExceeded, now)
			}
		case o.IdleTimeout > 0 && now.Sub(e.active) > o.IdleTimeout:
			l.close(cn)
		}
	}
}

// close ends a connection: its descriptor, its slot, its budget.
func (l *evLoop) close(cn *conn) {
	e := cn.ev
	if _, ok := l.conns[e.fd]; !ok {
		return
	}
	delete(l.conns, e.fd)
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, e.fd, nil)
	unix.Close(e.fd)
	cn.c.Close() // the slot
	cn.r.Release()
	l.f.wg.Done()
}

// epollPoll returns the events ready now. It waits for none, so it is
// made as a raw system call, without the runtime's bookkeeping of one
// that may block (a busy loop finds events at every look); only the
// wait when there are none is a blocking call. Measured within the
// noise: 0.99–1.03× redis-server's single commands with it, 0.94–0.99×
// without, alternated.
func epollPoll(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
