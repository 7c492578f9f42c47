// Command apiload measures the urldedupd API: CONNS connections post
// batches of BATCH URLs to POST /v1/check over the Unix socket for a fixed
// time, and it reports URLs/s and the p50/p99 latency of a request. Bodies
// are built before the clock starts; URLs are distinct until the pool is
// used up, then repeat (duplicates).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"
)

func main() {
	sock := flag.String("socket", "", "API Unix socket")
	conns := flag.Int("c", 8, "connections")
	batch := flag.Int("batch", 100, "URLs per request")
	dur := flag.Duration("d", 5*time.Second, "how long")
	pool := flag.Int("pool", 2_000_000, "distinct URLs to draw batches from")
	flag.Parse()
	nb := max(*pool / *batch, *conns)
	bodies := make([][]byte, nb)
	for i := range bodies {
		var b []byte
		for j := 0; j < *batch; j++ {
			id := i*(*batch) + j
			b = append(b, "http://www.site"...)
			b = strconv.AppendInt(b, int64(id%5000), 10)
			b = append(b, ".example.com/catalog/item-"...)
			b = strconv.AppendInt(b, int64(id), 10)
			b = append(b, ".html\n"...)
		}
		bodies[i] = b
	}
	var mu sync.Mutex
	var lat []time.Duration
	var urls, errs int
	deadline := time.Now().Add(*dur)
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < *conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1,
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, "unix", *sock)
				}}}
			var mine []time.Duration
			n, e := 0, 0
			for i := c; time.Now().Before(deadline); i += *conns {
				t0 := time.Now()
				resp, err := client.Post("http://urldedupd/v1/check", "text/plain", bytes.NewReader(bodies[i%nb]))
				if err != nil {
					e++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					e++
					continue
				}
				mine = append(mine, time.Since(t0))
				n += *batch
			}
			mu.Lock()
			lat = append(lat, mine...)
			urls += n
			errs += e
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[int(p*float64(len(lat)-1))]
	}
	fmt.Printf("| %d | %d | %d | %.0f | %.0f | %v | %v | %d |\n", *batch, *conns, len(lat),
		float64(len(lat))/elapsed.Seconds(), float64(urls)/elapsed.Seconds(),
		pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), errs)
	if errs > 0 {
		os.Exit(1)
	}
}
