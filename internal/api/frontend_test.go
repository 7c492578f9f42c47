package api_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/api"
	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// The API as a front end: it serves its routes and the extra ones (behind
// the token) on the listeners given, counts its connections in its
// ConnLimit, and after Drain and Shutdown, Serve returns nil.
func TestFrontEnd(t *testing.T) {
	st := statetest.Bitmap(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	extra := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "extra\n") })
	var fe frontend.FrontEnd = api.NewFrontEnd(st, &api.Options{Token: "s3cret", MaxConns: 4},
		&api.FrontEndConfig{Listeners: []net.Listener{l}, Routes: map[string]http.Handler{"/extra": extra}})
	if fe.Name() != "api" {
		t.Fatalf("Name %q", fe.Name())
	}
	served := make(chan error, 1)
	go func() { served <- fe.Serve(context.Background()) }()
	base := "http://" + l.Addr().String()
	bearer := []string{"Authorization", "Bearer s3cret"}
	if code, body := do(t, "POST", base+"/v1/check", "text/plain", "http://fe.example/\n", bearer...); code != 200 || body != "new\n" {
		t.Fatalf("check: %d %q", code, body)
	}
	if code, _ := do(t, "GET", base+"/extra", "", ""); code != 401 {
		t.Fatalf("extra route without the token: %d", code)
	}
	if code, body := do(t, "GET", base+"/extra", "", "", bearer...); code != 200 || body != "extra\n" {
		t.Fatalf("extra route: %d %q", code, body)
	}
	if c := fe.(*api.FrontEnd).Conns(); c.Max() != 4 {
		t.Fatalf("connection limit %d, want MaxConns 4", c.Max())
	}
	fe.Drain()
	ctx, cancel := frontend.WithGrace(context.Background(), 5*time.Second)
	defer cancel()
	if err := fe.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve after Shutdown: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return after Shutdown")
	}
	if _, err := http.Get(base + "/healthz"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a request after Shutdown: %v, want the connection refused", err)
	}
}
