package respserver_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/respserver"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// The front end in this process (run it with -race): 8 clients pipeline
// BF.MADD and BF.ADD of overlapping URLs at once; every URL is answered
// new exactly once, and Shutdown ends Serve with nil; with connections
// served by the event loop, by three loops deciding at once, and by
// goroutines.
func TestFrontEndConcurrent(t *testing.T) {
	for _, opts := range []respserver.Options{{}, {Loops: 3}, {Goroutines: true}} {
		name := mode(opts.Goroutines)
		if opts.Loops > 0 {
			name = fmt.Sprintf("event-loops-%d", opts.Loops)
		}
		t.Run(name, func(t *testing.T) { testFrontEndConcurrent(t, opts) })
	}
}

func mode(goroutines bool) string {
	if goroutines {
		return "goroutines"
	}
	return "event-loop"
}

func testFrontEndConcurrent(t *testing.T, opts respserver.Options) {
	opts.MaxConns = 4
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fe := respserver.New(statetest.Memory(t, "bitmap"), &opts, &respserver.Config{Listeners: []net.Listener{l}})
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

// A client that pipelines commands and never reads its replies does not
// hold up the others: once its replies fill the kernel's buffers, another
// client is answered throughout; and the slow one is closed once its
// replies have waited the command timeout. On TCP and a Unix socket, with
// connections served by the event loop and by goroutines.
func TestFrontEndSlowReader(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		for _, goroutines := range []bool{false, true} {
			t.Run(network+"/"+mode(goroutines), func(t *testing.T) {
				t.Run("others-served", func(t *testing.T) { testSlowReader(t, network, goroutines, time.Minute) })
				t.Run("timed-out", func(t *testing.T) { testSlowReader(t, network, goroutines, 300*time.Millisecond) })
			})
		}
	}
}

func testSlowReader(t *testing.T, network string, goroutines bool, timeout time.Duration) {
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "resp.sock")
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	fe := respserver.New(statetest.Memory(t, "keyed"), &respserver.Options{CommandTimeout: timeout, Goroutines: goroutines}, &respserver.Config{Listeners: []net.Listener{l}})
	served := make(chan error, 1)
	go func() { served <- fe.Serve(context.Background()) }()
	defer func() {
		ctx, cancel := frontend.WithGrace(context.Background(), 5*time.Second)
		defer cancel()
		fe.Shutdown(ctx)
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	slow, err := net.Dial(network, l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	// Bursts of 100 commands of 100 URLs (replies of about 400 bytes
	// each), until the server's writes and then the client's cannot go on.
	var cmd strings.Builder
	fmt.Fprintf(&cmd, "*102\r\n$7\r\nBF.MADD\r\n$4\r\nurls\r\n")
	for i := range 100 {
		u := fmt.Sprintf("http://slow.example/%03d", i)
		fmt.Fprintf(&cmd, "$%d\r\n%s\r\n", len(u), u)
	}
	burst := []byte(strings.Repeat(cmd.String(), 100))
	var sent atomic.Int64
	stopped := make(chan error, 1)
	go func() {
		for i := 0; i < 2000; i++ { // bounded: 640 MB of replies
			slow.SetWriteDeadline(time.Now().Add(2 * time.Minute))
			if _, err := slow.Write(burst); err != nil {
				stopped <- err
				return
			}
			sent.Add(1)
		}
		stopped <- nil
	}()
	// Stuck: no burst sent for 300 ms (bounded by a minute).
	for last, i := int64(-1), 0; ; i++ {
		time.Sleep(300 * time.Millisecond)
		n := sent.Load()
		if n == last {
			break
		}
		if last = n; i == 200 {
			t.Fatal("the slow client's writes never stopped: its replies went somewhere")
		}
	}
	if timeout < time.Minute {
		select {
		case err := <-stopped:
			if err == nil {
				t.Fatal("the slow client sent 640 MB, its replies unread, and was never closed")
			}
		case <-time.After(time.Minute):
			t.Fatalf("the slow client was not closed a minute after its replies stopped going out (timeout %v)", timeout)
		}
		return
	}
	other, err := net.Dial(network, l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	r := bufio.NewReader(other)
	for i := range 20 {
		other.SetDeadline(time.Now().Add(30 * time.Second))
		u := fmt.Sprintf("http://other.example/%d", i)
		fmt.Fprintf(other, "*3\r\n$6\r\nBF.ADD\r\n$4\r\nurls\r\n$%d\r\n%s\r\n", len(u), u)
		if l, err := r.ReadString('\n'); l != ":1\r\n" {
			t.Fatalf("the other client's command %d while one reads nothing: %q, %v", i, l, err)
		}
	}
	select {
	case err := <-stopped:
		t.Fatalf("the slow client was closed before its timeout of %v: %v", timeout, err)
	default:
	}
}
