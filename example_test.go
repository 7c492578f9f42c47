package urldedupd_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/urldedupd/urldedupd"
)

// A crawler's frontier asks which of the links it found are new. The state
// persists: a second run, or another process on the same directory, finds
// them seen.
func Example() {
	tmp, err := os.MkdirTemp("", "urldedupd-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx := context.Background()
	seen, err := urldedupd.Open(ctx, filepath.Join(tmp, "state"), &urldedupd.Options{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	defer seen.Close()

	links := []string{
		"http://example.com/",
		"HTTP://Example.com:80/a/../", // the same URL, spelled otherwise
		"http://example.com/b",
	}
	dup := make([]bool, len(links))
	if err := seen.Decide(ctx, links, dup); err != nil {
		log.Fatal(err)
	}
	for i, u := range links {
		if !dup[i] {
			fmt.Println("crawl", u)
		}
	}
	// Output:
	// crawl http://example.com/
	// crawl http://example.com/b
}

// Crawlers on many hosts share one state in Redis (or Redis Cluster:
// redis-cluster://host1:6379,host2:6379).
func ExampleOpen_redis() {
	ctx := context.Background()
	seen, err := urldedupd.Open(ctx, "redis://127.0.0.1:6379/0", &urldedupd.Options{Create: true, Prefix: "crawl"})
	if err != nil {
		log.Fatal(err)
	}
	defer seen.Close()
	dup := make([]bool, 1)
	if err := seen.Decide(ctx, []string{"http://example.com/"}, dup); err != nil {
		log.Fatal(err)
	}
	fmt.Println("seen before:", dup[0])
}

// Check looks without recording; Stats says how far the answers can be
// trusted.
func ExampleState_Stats() {
	tmp, err := os.MkdirTemp("", "urldedupd-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx := context.Background()
	seen, err := urldedupd.Open(ctx, filepath.Join(tmp, "state"), &urldedupd.Options{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	defer seen.Close()
	dup := make([]bool, 2)
	seen.Decide(ctx, []string{"http://a.example/", "http://b.example/"}, dup)
	seen.Check(ctx, []string{"http://a.example/", "http://c.example/"}, dup)
	fmt.Println(dup)
	st, err := seen.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: about %.0f URLs, next new URL answered duplicate with chance %.1e\n", st.Layout, st.Distinct, st.FalseDupChance)
	// Output:
	// [true false]
	// bitmap: about 2 URLs, next new URL answered duplicate with chance 4.7e-10
}
