package daemon

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// apiConns tracks the API's connections, so that a shutdown can close at
// once those with no request being served: connections that never sent a
// byte (which http.Server.Shutdown would leave for 5 seconds) and
// connections still sending a request's head.
type apiConns struct {
	mu    sync.Mutex
	conns map[net.Conn]*connInfo
	peak  int // most connections open at once since the last look
}

type connInfo struct {
	state   http.ConnState
	serving bool // a handler has the connection's current request
}

type connKey struct{}

func newAPIConns() *apiConns { return &apiConns{conns: make(map[net.Conn]*connInfo)} }

// install hooks t into srv and wraps srv.Handler.
func (t *apiConns) install(srv *http.Server) {
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

func (t *apiConns) setState(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch st {
	case http.StateNew:
		t.conns[c] = &connInfo{state: st}
		t.peak = max(t.peak, len(t.conns))
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
func (t *apiConns) closeWaiting() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c, ci := range t.conns {
		if ci.state == http.StateNew || ci.state == http.StateActive && !ci.serving {
			c.Close()
		}
	}
}

// counts returns the connections open now and the most open at once since
// the last call.
func (t *apiConns) counts() (now, peak int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now, peak = len(t.conns), t.peak
	t.peak = now
	return now, peak
}
