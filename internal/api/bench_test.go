package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/api"
	"github.com/urldedupd/urldedupd/internal/state"
)

func benchHandler(b *testing.B) http.Handler {
	d, err := state.Open(context.Background(), filepath.Join(b.TempDir(), "s"), &state.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return api.New(d, nil).Handler()
}

// BenchmarkCheckOne is the handler alone (no network, no net/http server)
// for GET /v1/check?url=….
func BenchmarkCheckOne(b *testing.B) {
	h := benchHandler(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		r := httptest.NewRequest("GET", "/v1/check?url=http://www.site.example.com/catalog/item-"+strconv.Itoa(i)+".html", nil)
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
}

// BenchmarkCheckBatch is the handler alone for a POST of 10,000 URLs.
func BenchmarkCheckBatch(b *testing.B) {
	h := benchHandler(b)
	var body strings.Builder
	for i := range 10000 {
		body.WriteString("http://www.site.example.com/catalog/item-" + strconv.Itoa(i) + ".html\n")
	}
	s := body.String()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/v1/check", strings.NewReader(s))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10000), "ns/URL")
}
