package api

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// conns tracks the front end's HTTP connections, so that a shutdown can
// close at once those with no request being served: connections that never sent a
// byte (which http.Server.Shutdown would leave for 5 seconds) and
// connections still sending a request's head.
type conns struct {
	mu    sync.Mutex
	conns map[net.Conn]*connInfo
}

type connInfo struct {
	state   http.ConnState
	serving bool // a handler has the connection's current request
}

type connKey struct{}

func newConns() *conns { return &conns{conns: make(map[net.Conn]*connInfo)} }

// install hooks t into srv and wraps srv.Handler.
func (t *conns) install(srv *http.Server) {
	srv.ConnState = t.setState
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}
	h := srv.Handler
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
			t.mu.Lock()
			if ci := t.conns[c]; ci != nil {
				ci.serving = true
			}
			t.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (t *conns) setState(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch st {
	case http.StateNew:
		t.conns[c] = &connInfo{state: st}
	case http.StateClosed, http.StateHijacked:
		delete(t.conns, c)
	default:
		if ci := t.conns[c]; ci != nil {
			ci.state = st
			ci.serving = ci.serving && st == http.StateActive
		}
	}
}

// closeWaiting closes the connections that have no request in a handler.
func (t *conns) closeWaiting() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c, ci := range t.conns {
		if ci.state == http.StateNew || ci.state == http.StateActive && !ci.serving {
			c.Close()
		}
	}
}
