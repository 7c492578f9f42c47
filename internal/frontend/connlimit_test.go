package frontend

import (
	"errors"
	"net"
	"testing"
	"time"
)

// acceptAll accepts on each listener until it fails, sending each
// connection, then the error, to the channel returned.
func acceptAll(ls ...net.Listener) chan any {
	ch := make(chan any, 16)
	for _, l := range ls {
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					ch <- err
					return
				}
				ch <- c
			}
		}()
	}
	return ch
}

func tcpListener(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func dial(t *testing.T, l net.Listener) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func next(t *testing.T, ch chan any, within time.Duration) any {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		return nil
	}
}

// Two listeners share a cap of 2: a third connection is handed over only
// when one of the first two is closed (twice, which frees one slot), and
// closing a listener ends its wait for a slot.
func TestConnLimit(t *testing.T) {
	cl := NewConnLimit(2)
	a, b := cl.Listener(tcpListener(t)), cl.Listener(tcpListener(t))
	ch := acceptAll(a, b)
	dial(t, a)
	dial(t, b)
	first, ok := next(t, ch, 5*time.Second).(net.Conn)
	second, ok2 := next(t, ch, 5*time.Second).(net.Conn)
	if !ok || !ok2 {
		t.Fatal("the first two connections were not accepted")
	}
	defer second.Close()
	if n := cl.InUse(); n != 2 {
		t.Fatalf("inUse %d, want 2", n)
	}
	dial(t, a)
	if v := next(t, ch, 300*time.Millisecond); v != nil {
		t.Fatalf("a third connection over a cap of 2: %v", v)
	}
	if w := cl.Waits(); w != 1 {
		t.Fatalf("waits %d, want 1", w)
	}
	first.Close()
	first.Close()
	third, ok := next(t, ch, 5*time.Second).(net.Conn)
	if !ok {
		t.Fatal("the third connection was not handed over when the first closed")
	}
	defer third.Close()
	if n := cl.InUse(); n != 2 {
		t.Fatalf("inUse %d after a double close and a new connection, want 2", n)
	}
	if now, peak := cl.Counts(); now != 2 || peak != 2 {
		t.Fatalf("Counts = %d now, %d peak; want 2, 2", now, peak)
	}

	dial(t, b)
	time.Sleep(100 * time.Millisecond) // b has it and waits for a slot
	b.Close()
	if err, ok := next(t, ch, 5*time.Second).(error); !ok || !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept waiting for a slot, after Close: %v", err)
	}
}
