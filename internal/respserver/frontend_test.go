package respserver_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/respserver"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// The front end in this process (run it with -race): 8 clients pipeline
// BF.MADD and BF.ADD of overlapping URLs at once; every URL is answered
// new exactly once, and Shutdown ends Serve with nil.
func TestFrontEndConcurrent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fe := respserver.New(statetest.Memory(t, "bitmap"), &respserver.Options{MaxConns: 4}, &respserver.Config{Listeners: []net.Listener{l}})
	served := make(chan error, 1)
	go func() { served <- fe.Serve(context.Background()) }()

	const clients, urls = 8, 2000
	var mu sync.Mutex
	newCount := map[string]int{}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(60 * time.Second))
			var req strings.Builder
			var sent []string
			for i := c * urls / 4; i < c*urls/4+urls/2; i += 10 { // overlapping halves
				fmt.Fprintf(&req, "*12\r\n$7\r\nBF.MADD\r\n$4\r\nurls\r\n")
				for j := i; j < i+10; j++ {
					u := fmt.Sprintf("http://race.example/%d", j%urls)
					fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(u), u)
					sent = append(sent, u)
				}
			}
			go conn.Write([]byte(req.String()))
			r := bufio.NewReader(conn)
			for k := 0; k < len(sent); k++ {
				if k%10 == 0 {
					if l, _ := r.ReadString('\n'); l != "*10\r\n" {
						t.Errorf("client %d: %q", c, l)
						return
					}
				}
				l, _ := r.ReadString('\n')
				if l == ":1\r\n" {
					mu.Lock()
					newCount[sent[k]]++
					mu.Unlock()
				} else if l != ":0\r\n" {
					t.Errorf("client %d: %q", c, l)
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(newCount) != urls {
		t.Errorf("%d URLs answered new, want %d", len(newCount), urls)
	}
	for u, n := range newCount {
		if n != 1 {
			t.Fatalf("%s answered new %d times", u, n)
		}
	}
	ctx, cancel := frontend.WithGrace(context.Background(), 5*time.Second)
	defer cancel()
	if err := fe.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
}
