package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// Options configure a Server. Zero fields take the defaults below.
type Options struct {
	MaxBatch int   // URLs per batch; default 100,000
	MaxBody  int64 // bytes per request body; default 32 MiB, at most 4/5 of MaxInflightBytes
	MaxURL   int   // bytes per URL; default 64 KiB
	// MaxInflightBytes caps the request bodies held at once across the
	// server, with 40 bytes more per URL of a batch being decided; default
	// 80 MiB. A fifth of it is kept in equal shares, one per connection
	// (MaxConns), so that a request within its share (16 KiB by default)
	// is never refused; requests share the other four fifths for what they
	// hold beyond their share. A request that does not fit is answered 503
	// with Retry-After.
	MaxInflightBytes int64
	// MaxConns is the most connections served at once, which the caller
	// enforces (daemon.Config.MaxConns); default 1024. It only sets the
	// share of MaxInflightBytes kept for each.
	MaxConns int
	// BodyTimeout bounds the reading of one request body; default 30
	// seconds. A slower client is answered 408 and its connection closed.
	BodyTimeout time.Duration
	Token       string // when set, every endpoint but /healthz needs "Authorization: Bearer TOKEN"
	// Observe, when set, is told about every request: the endpoint, the
	// status code, how long it took, and the URLs found new and dup.
	Observe func(endpoint string, code int, d time.Duration, nNew, nDup int)
}

const (
	DefaultMaxBatch         = 100_000
	DefaultMaxBody          = 32 << 20
	DefaultMaxURL           = 64 << 10
	DefaultMaxInflightBytes = 80 << 20
	DefaultMaxConns         = 1024
	DefaultBodyTimeout      = 30 * time.Second
	chunk                   = 1024 // signatures decided at a time
)

// Server answers API requests against one state. It is safe for
// concurrent use.
type Server struct {
	b      *state.State
	opts   Options
	pool   pool
	budget *frontend.Budget

	readMu   sync.Mutex // guards reading and draining
	reading  map[*http.ResponseController]struct{}
	draining bool

	statsMu   sync.Mutex
	stats     []byte
	statsTime time.Time
}

// New returns a Server deciding with the state b, local or remote. Each
// request's URLs are sent to it in batches of up to 1024, whatever its
// InFlight: a request is one batch in flight.
func New(b *state.State, opts *Options) *Server {
	s := &Server{b: b}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.MaxBatch <= 0 {
		s.opts.MaxBatch = DefaultMaxBatch
	}
	if s.opts.MaxBody <= 0 {
		s.opts.MaxBody = DefaultMaxBody
	}
	if s.opts.MaxURL <= 0 {
		s.opts.MaxURL = DefaultMaxURL
	}
	if s.opts.MaxInflightBytes <= 0 {
		s.opts.MaxInflightBytes = DefaultMaxInflightBytes
	}
	if s.opts.MaxConns <= 0 {
		s.opts.MaxConns = DefaultMaxConns
	}
	s.budget = frontend.NewBudget(s.opts.MaxInflightBytes, s.opts.MaxConns)
	s.opts.MaxBody = min(s.opts.MaxBody, s.budget.Pool())
	if s.opts.BodyTimeout <= 0 {
		s.opts.BodyTimeout = DefaultBodyTimeout
	}
	s.reading = make(map[*http.ResponseController]struct{})
	s.pool.free = make(chan *batch, poolBatches)
	s.pool.new = func() *batch { return &batch{signer: b.Signer()} }
	return s
}

// Handler returns the API's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/check", s.wrap("check", s.check))
	mux.Handle("/v1/stats", s.wrap("stats", s.statsHandler))
	mux.Handle("/v1/forget", s.wrap("forget", s.forget))
	mux.Handle("/healthz", s.wrap("healthz", func(w http.ResponseWriter, r *http.Request) (int, int, int) {
		io.WriteString(w, "ok\n")
		return http.StatusOK, 0, 0
	}))
	return mux
}

// handlerFunc serves a request and returns its status and the URLs it
// found new and dup.
type handlerFunc func(w http.ResponseWriter, r *http.Request) (code, nNew, nDup int)

func (s *Server) wrap(name string, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var code, nNew, nDup int
		if s.opts.Token != "" && name != "healthz" && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="urldedupd"`)
			code = fail(w, http.StatusUnauthorized, "missing or wrong bearer token")
		} else {
			code, nNew, nDup = h(w, r)
		}
		if s.opts.Observe != nil {
			s.opts.Observe(name, code, time.Since(start), nNew, nDup)
		}
	})
}

func (s *Server) authorized(r *http.Request) bool { return Authorized(r, s.opts.Token) }

// Authorized reports whether r carries "Authorization: Bearer TOKEN",
// compared in constant time.
func Authorized(r *http.Request, token string) bool {
	const prefix = "Bearer "
	h := r.Header.Get("Authorization")
	return len(h) > len(prefix) && h[:len(prefix)] == prefix && frontend.TokenMatches(h[len(prefix):], token)
}

// RequireToken wraps h so that requests without the bearer token get 401,
// with the API's error format. An empty token lets everything through.
func RequireToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Authorized(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="urldedupd"`)
			fail(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// fail writes a one-line error and returns its code.
func fail(w http.ResponseWriter, code int, format string, args ...any) int {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintf(w, "error: "+format+"\n", args...)
	return code
}

func (s *Server) check(w http.ResponseWriter, r *http.Request) (int, int, int) {
	switch r.Method {
	case http.MethodGet:
		return s.checkOne(w, r)
	case http.MethodPost:
		return s.checkBatch(w, r)
	}
	w.Header().Set("Allow", "GET, POST")
	return fail(w, http.StatusMethodNotAllowed, "%s not allowed: GET /v1/check?url=… or POST a batch", r.Method), 0, 0
}

func (s *Server) checkOne(w http.ResponseWriter, r *http.Request) (int, int, int) {
	u := r.URL.Query().Get("url")
	switch {
	case u == "":
		return fail(w, http.StatusBadRequest, "missing url parameter"), 0, 0
	case len(u) > s.opts.MaxURL:
		return fail(w, http.StatusBadRequest, "url is %d bytes, over the limit of %d", len(u), s.opts.MaxURL), 0, 0
	}
	b := s.pool.get()
	defer s.pool.put(b)
	b.urls = append(b.urls[:0], []byte(u))
	nNew, nDup, err := s.decide(r.Context(), b, dryRun(r))
	if err != nil {
		return fail(w, http.StatusServiceUnavailable, "%v", err), 0, 0
	}
	verdict := "dup"
	if nNew == 1 {
		verdict = "new"
	}
	if wantsJSON(r.Header.Get("Accept")) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"result\":%q}\n", verdict)
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, verdict+"\n")
	}
	return http.StatusOK, nNew, nDup
}

func dryRun(r *http.Request) bool {
	v := r.URL.Query().Get("dry_run")
	return v == "1" || v == "true"
}

func wantsJSON(v string) bool { return strings.HasPrefix(v, "application/json") }

// isText reports whether a batch of this content type is read as lines:
// text/plain, and what curl --data-binary and generic clients send.
func isText(ct string) bool {
	for _, p := range []string{"text/plain", "application/x-www-form-urlencoded", "application/octet-stream"} {
		if strings.HasPrefix(ct, p) {
			return true
		}
	}
	return false
}

func (s *Server) checkBatch(w http.ResponseWriter, r *http.Request) (int, int, int) {
	b := s.pool.get()
	defer s.pool.put(b)
	defer s.discharge(b)
	isJSON, code := s.readBatch(w, r, b)
	if code != 0 {
		return code, 0, 0
	}
	nNew, nDup, err := s.decide(r.Context(), b, dryRun(r))
	if err != nil {
		return fail(w, http.StatusServiceUnavailable, "%v", err), 0, 0
	}
	s.writeVerdicts(w, b, isJSON, nNew, nDup)
	return http.StatusOK, nNew, nDup
}

// readBatch reads a POSTed batch into b.urls: text (one URL a line) or
// JSON (an array of strings) by its content type, the body and the URLs
// charged to the budget (the caller discharges b). On a bad batch it
// writes the error and returns its code.
func (s *Server) readBatch(w http.ResponseWriter, r *http.Request, b *batch) (isJSON bool, code int) {
	ct := r.Header.Get("Content-Type")
	isJSON = wantsJSON(ct)
	if ct != "" && !isJSON && !isText(ct) {
		return isJSON, fail(w, http.StatusUnsupportedMediaType, "content type %q: send text/plain (one URL a line) or application/json (an array of strings)", ct)
	}
	if code := s.readBody(w, r, b); code != 0 {
		return isJSON, code
	}
	if !utf8.Valid(b.body) {
		return isJSON, fail(w, http.StatusBadRequest, "body is not UTF-8")
	}
	return isJSON, s.parseBatch(w, b, isJSON)
}

// parseBatch splits the body into b.urls, in place, and charges the
// budget for them; on a bad batch it writes the error and returns its code.
// Parsing stops one URL past MaxBatch.
func (s *Server) parseBatch(w http.ResponseWriter, b *batch, isJSON bool) int {
	// The slices are charged before they are made, for as many URLs as
	// the body can hold (a line each; in JSON, a comma after all but the
	// last and two quotes each), at most one past MaxBatch; what was not
	// needed is given back after the parse. A batch that would not fit
	// even in an idle server is 413, whether or not it is over MaxBatch.
	n := bytes.Count(b.body, []byte{'\n'}) + 1
	if isJSON {
		n = min(bytes.Count(b.body, []byte{','})+1, bytes.Count(b.body, []byte{'"'})/2)
	}
	most := int64(min(n, s.opts.MaxBatch+1)) * urlCost
	if err := s.charge(b, most); err != nil {
		if b.charged+most > s.budget.Most() { // retrying would never help
			return fail(w, http.StatusRequestEntityTooLarge, "batch of %d bytes (up to %d URLs) needs at least %d bytes in flight (its body and %d a URL), over the limit of %d for one request: send smaller batches",
				len(b.body), n, b.charged+most, urlCost, s.budget.Most())
		}
		return s.busy(w)
	}
	b.urls = b.urls[:0]
	if isJSON {
		var err error
		if b.urls, err = splitJSON(b.body, b.urls, s.opts.MaxBatch); err != nil {
			return fail(w, http.StatusBadRequest, "%v", err)
		}
	} else {
		body := b.body
		for len(body) > 0 && len(b.urls) <= s.opts.MaxBatch {
			i := bytes.IndexByte(body, '\n')
			if i < 0 {
				i = len(body)
			}
			line := body[:i]
			if i < len(body) {
				body = body[i+1:]
			} else {
				body = nil
			}
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			if len(line) > 0 {
				b.urls = append(b.urls, line)
			}
		}
	}
	switch {
	case len(b.urls) == 0:
		return fail(w, http.StatusBadRequest, "empty batch")
	case len(b.urls) > s.opts.MaxBatch:
		return fail(w, http.StatusRequestEntityTooLarge, "batch over the limit of %d URLs", s.opts.MaxBatch)
	}
	for i, u := range b.urls {
		if len(u) > s.opts.MaxURL {
			return fail(w, http.StatusBadRequest, "URL %d is %d bytes, over the limit of %d", i+1, len(u), s.opts.MaxURL)
		}
	}
	s.refund(b, most-int64(len(b.urls))*urlCost)
	return 0
}

// decide signs and decides b.urls into b.seen.
func (s *Server) decide(ctx context.Context, b *batch, dry bool) (nNew, nDup int, err error) {
	nDup, err = s.apply(ctx, b, func(ctx context.Context, sigs []signature.Signature, seen []bool) error {
		return s.b.Decide(ctx, sigs, seen, dry)
	})
	if err != nil {
		return 0, 0, err
	}
	return len(b.urls) - nDup, nDup, nil
}

// apply signs b.urls and runs op on them in chunks, op setting b.seen;
// it returns how many are set (seen, or held for a forget).
func (s *Server) apply(ctx context.Context, b *batch, op func(context.Context, []signature.Signature, []bool) error) (int, error) {
	n := len(b.urls)
	if cap(b.sigs) < n {
		b.sigs, b.seen = make([]signature.Signature, n), make([]bool, n)
	}
	b.sigs, b.seen = b.sigs[:n], b.seen[:n]
	for i, u := range b.urls {
		b.sigs[i], _ = b.signer.Sign(u)
	}
	for i := 0; i < n; i += chunk {
		end := min(i+chunk, n)
		if err := op(ctx, b.sigs[i:end], b.seen[i:end]); err != nil {
			return 0, err
		}
	}
	set := 0
	for _, v := range b.seen {
		if v {
			set++
		}
	}
	return set, nil
}

func (s *Server) writeVerdicts(w http.ResponseWriter, b *batch, isJSON bool, nNew, nDup int) {
	out := b.out[:0]
	if isJSON {
		w.Header().Set("Content-Type", "application/json")
		out = append(out, `{"results":[`...)
		for i, seen := range b.seen {
			if i > 0 {
				out = append(out, ',')
			}
			if seen {
				out = append(out, `"dup"`...)
			} else {
				out = append(out, `"new"`...)
			}
		}
		out = append(out, `],"new":`...)
		out = strconv.AppendInt(out, int64(nNew), 10)
		out = append(out, `,"dup":`...)
		out = strconv.AppendInt(out, int64(nDup), 10)
		out = append(out, "}\n"...)
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, seen := range b.seen {
			if seen {
				out = append(out, "dup\n"...)
			} else {
				out = append(out, "new\n"...)
			}
		}
	}
	b.out = out
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.Write(out)
}

// statsHandler answers /v1/stats, counting the bits at most once a second.
func (s *Server) statsHandler(w http.ResponseWriter, r *http.Request) (int, int, int) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		return fail(w, http.StatusMethodNotAllowed, "%s not allowed", r.Method), 0, 0
	}
	s.statsMu.Lock()
	if time.Since(s.statsTime) > time.Second {
		rep, err := s.b.Report(r.Context())
		if err != nil {
			s.statsMu.Unlock()
			return fail(w, http.StatusServiceUnavailable, "%v", err), 0, 0
		}
		s.stats, _ = json.Marshal(rep)
		s.stats = append(s.stats, '\n')
		s.statsTime = time.Now()
	}
	body := s.stats
	s.statsMu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
	return http.StatusOK, 0, 0
}
