package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/urldedupd/urldedupd/internal/state"
)

// forget answers POST /v1/forget: a batch of URLs as /v1/check takes
// them (text/plain, one a line, or a JSON array of strings), each removed
// from the state so that its next sighting is new. The answer is one
// line a URL, "forgotten" (it was held) or "absent", or in JSON
// {"results":["forgotten","absent",…],"forgotten":N}. A layout that
// cannot forget (it keeps URLs in shared bits) answers 409 with the
// reason, changing nothing.
func (s *Server) forget(w http.ResponseWriter, r *http.Request) (int, int, int) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		return fail(w, http.StatusMethodNotAllowed, "%s not allowed: POST a batch to forget", r.Method), 0, 0
	}
	if err := s.b.Forget(r.Context(), nil, nil); errors.Is(err, state.ErrNoForget) {
		return fail(w, http.StatusConflict, "%v", err), 0, 0
	}
	b := s.pool.get()
	defer s.pool.put(b)
	defer s.discharge(b)
	isJSON, code := s.readBatch(w, r, b)
	if code != 0 {
		return code, 0, 0
	}
	n, err := s.forgetBatch(r.Context(), b)
	if err != nil {
		return fail(w, http.StatusServiceUnavailable, "%v", err), 0, 0
	}
	out := b.out[:0]
	if isJSON {
		w.Header().Set("Content-Type", "application/json")
		out = append(out, `{"results":[`...)
		for i, was := range b.seen {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, verdictForgotten(was, `"forgotten"`, `"absent"`)...)
		}
		out = append(out, `],"forgotten":`...)
		out = strconv.AppendInt(out, int64(n), 10)
		out = append(out, "}\n"...)
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, was := range b.seen {
			out = append(out, verdictForgotten(was, "forgotten\n", "absent\n")...)
		}
	}
	b.out = out
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.Write(out)
	return http.StatusOK, 0, 0
}

func verdictForgotten(was bool, yes, no string) string {
	if was {
		return yes
	}
	return no
}

// forgetBatch forgets b's URLs, b.seen[i] telling whether each was held,
// and returns how many were.
func (s *Server) forgetBatch(ctx context.Context, b *batch) (int, error) {
	return s.apply(ctx, b, s.b.Forget)
}
