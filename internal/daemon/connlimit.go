package daemon

import (
	"net"
	"sync"
	"sync/atomic"
)

// connLimit caps the API connections served at once, across listeners.
// A listener accepts a connection, then waits for a free slot before it
// hands the connection to the server and accepts the next: at the cap,
// one accepted connection per listener waits unread (its bytes stay in
// the kernel), and further ones wait in the kernel's listen backlog, so
// that waiting connections cost the daemon nothing. The slot comes back
// when the connection is closed.
type connLimit struct {
	slots chan struct{}
	waits atomic.Uint64 // connections that found every slot taken
}

func newConnLimit(n int) *connLimit { return &connLimit{slots: make(chan struct{}, n)} }

// inUse is how many connections hold a slot.
func (cl *connLimit) inUse() int { return len(cl.slots) }

// listener wraps l so that its accepted connections take cl's slots.
func (cl *connLimit) listener(l net.Listener) net.Listener {
	return &limitedListener{Listener: l, limit: cl, done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	limit     *connLimit
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
