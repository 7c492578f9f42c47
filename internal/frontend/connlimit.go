package frontend

import (
	"net"
	"sync"
	"sync/atomic"
)

// ConnLimit caps the connections a front end serves at once, across its
// listeners.
// A listener accepts a connection, then waits for a free slot before it
// hands the connection to the server and accepts the next: at the cap,
// one accepted connection per listener waits unread (its bytes stay in
// the kernel), and further ones wait in the kernel's listen backlog, so
// that waiting connections cost the daemon nothing. The slot comes back
// when the connection is closed. It is safe for concurrent use; several
// front ends may share one, or have one each.
type ConnLimit struct {
	slots chan struct{}
	waits atomic.Uint64 // connections that found every slot taken
	peak  atomic.Int64  // most slots held at once since the last Counts
}

// NewConnLimit returns a ConnLimit of n connections (at least 1).
func NewConnLimit(n int) *ConnLimit { return &ConnLimit{slots: make(chan struct{}, max(n, 1))} }

// Max is the cap.
func (cl *ConnLimit) Max() int { return cap(cl.slots) }

// InUse is how many connections hold a slot.
func (cl *ConnLimit) InUse() int { return len(cl.slots) }

// Waits is how many connections found every slot taken, and waited.
func (cl *ConnLimit) Waits() uint64 { return cl.waits.Load() }

// Counts returns the connections open now and the most open at once since
// the last call.
func (cl *ConnLimit) Counts() (now, peak int) {
	now = cl.InUse()
	peak = int(cl.peak.Swap(int64(now)))
	return now, max(peak, now)
}

// Listener wraps l so that its accepted connections take cl's slots.
func (cl *ConnLimit) Listener(l net.Listener) net.Listener {
	return &limitedListener{Listener: l, limit: cl, done: make(chan struct{})}
}

// took notes a slot taken, for the peak.
func (cl *ConnLimit) took() {
	n := int64(len(cl.slots))
	for {
		p := cl.peak.Load()
		if n <= p || cl.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

type limitedListener struct {
	net.Listener
	limit     *ConnLimit
	done      chan struct{}
	closeOnce sync.Once
}

// Accept accepts a connection, then waits for a free slot for it.
func (l *limitedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case l.limit.slots <- struct{}{}:
	default:
		l.limit.waits.Add(1)
		select {
		case l.limit.slots <- struct{}{}:
		case <-l.done:
			c.Close()
			return nil, &net.OpError{Op: "accept", Net: l.Addr().Network(), Addr: l.Addr(), Err: net.ErrClosed}
		}
	}
	l.limit.took()
	return &limitedConn{Conn: c, slots: l.limit.slots}, nil
}

// Close closes the listener, and a connection waiting for a slot.
func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back on its first Close.
type limitedConn struct {
	net.Conn
	slots  chan struct{}
	closed atomic.Bool
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		<-c.slots
	}
	return err
}

// CloseWrite is passed on: net/http half-closes a connection it ends with
// a body unread, so that the client reads the answer rather than a reset.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// NetConn is the connection the limit wraps, for a server that serves it
// by its descriptor (the slot is given back by this Close still).
func (c *limitedConn) NetConn() net.Conn { return c.Conn }
