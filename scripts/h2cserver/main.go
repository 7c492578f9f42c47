// Command h2cserver is a cleartext HTTP/2 server for the project's h2c
// test captures: it takes both ways into h2c, the connection preface
// (prior knowledge) and the HTTP/1.1 "Upgrade: h2c" (answered with 101
// Switching Protocols), which nghttpd does not do. Every request is
// answered with "ok\n" after its body is read.
//
// Usage: h2cserver ADDR
//
// It uses golang.org/x/net/http2/h2c, the Go team's Upgrade
// implementation; net/http's own unencrypted HTTP/2 takes prior knowledge
// only.
package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c" //nolint:staticcheck // the only Go implementation of the h2c Upgrade
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: h2cserver ADDR")
		os.Exit(2)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok\n")
	})
	srv := &http.Server{Addr: os.Args[1], Handler: h2c.NewHandler(h, &http2.Server{})}
	log.Fatal(srv.ListenAndServe())
}
