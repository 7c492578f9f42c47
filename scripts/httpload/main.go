// Command httpload makes HTTP/1.1 traffic for the project's benchmark
// captures: "serve ADDR" answers every request with a small body, and
// "load" sends requests over many keep-alive connections, pipelining on a
// share of them, reading every answer.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: httpload serve ADDR | httpload load -addr HOST:PORT -n N -c CONNS -pipelined SHARE")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		body := []byte("ok\n")
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Length", "3")
			w.Write(body)
		})
		fmt.Fprintln(os.Stderr, http.ListenAndServe(os.Args[2], h))
		os.Exit(1)
	case "load":
		load(os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}

func load(args []string) {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	addr := fs.String("addr", "192.0.2.1:8080", "server")
	n := fs.Int("n", 500000, "requests in all")
	conns := fs.Int("c", 2000, "connections")
	share := fs.Float64("pipelined", 0.25, "share of connections that pipeline")
	depth := fs.Int("depth", 10, "requests in flight on a pipelining connection")
	fs.Parse(args)
	per := *n / *conns
	var next atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64) // connections open at once
	for c := 0; c < *conns; c++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(c int) {
			defer wg.Done()
			defer func() { <-sem }()
			d := 1
			if float64(c) < *share*float64(*conns) {
				d = *depth
			}
			if err := conn(*addr, c, per, d, &next); err != nil {
				fmt.Fprintln(os.Stderr, "conn", c, err)
			}
		}(c)
	}
	wg.Wait()
	fmt.Fprintf(os.Stderr, "%d requests on %d connections\n", next.Load(), *conns)
}

// conn sends reqs requests on one connection, depth at a time.
func conn(addr string, c, reqs, depth int, next *atomic.Int64) error {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	r := bufio.NewReader(nc)
	w := bufio.NewWriter(nc)
	sent, got := 0, 0
	for got < reqs {
		for sent < reqs && sent-got < depth {
			id := next.Add(1)
			fmt.Fprintf(w, "GET /site%d/section%d/page-%d.html?id=%d HTTP/1.1\r\nHost: host%d.bench.example\r\nUser-Agent: httpload/1\r\nAccept: */*\r\n\r\n",
				id%97, id%13, id, id*7, c%50)
			sent++
		}
		if err := w.Flush(); err != nil {
			return err
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got++
	}
	return nil
}
