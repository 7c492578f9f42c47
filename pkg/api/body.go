package api

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// Reading a body under the server's budget: a request takes its share of
// Options.MaxInflightBytes before the bytes arrive (all of Content-Length at
// once, or in growing steps for a chunked body) and gives it back when it
// ends. A request that does not fit is answered 503 with Retry-After.
const (
	minStep    = 4 << 10 // first charge for a chunked body
	maxStep    = 4 << 20 // largest further charge for a chunked body
	urlCost    = 40      // bytes charged per URL for the slices that hold it
	retryAfter = "1"     // seconds, in a 503 for a full budget
)

var (
	errBusy    = errors.New("bytes in flight over the limit")
	errTooBig  = errors.New("body over the limit")
	errDrained = errors.New("server shutting down")
)

// budget counts the bytes that requests hold, across the server. The last
// fifth of it is kept for small requests (holding at most smallRequest
// bytes), so that big uploads cannot shut the others out.
type budget struct {
	limit int64
	used  atomic.Int64
}

const smallRequest = bigBody

// bigLimit is the part of the budget open to big requests.
func (bg *budget) bigLimit() int64 { return bg.limit - bg.limit/5 }

// take takes n bytes for a request that will then hold total.
func (bg *budget) take(n, total int64) bool {
	limit := bg.limit
	if total > smallRequest {
		limit = bg.bigLimit()
	}
	for {
		u := bg.used.Load()
		if u+n > limit {
			return false
		}
		if bg.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// fits reports whether a request holding total bytes fits in the budget
// when nothing else holds any of it.
func (bg *budget) fits(total int64) bool {
	if total > smallRequest {
		return total <= bg.bigLimit()
	}
	return total <= bg.limit
}

// charge takes n bytes of the budget for b's request.
func (s *Server) charge(b *batch, n int64) error {
	if !s.budget.take(n, b.charged+n) {
		return errBusy
	}
	b.charged += n
	return nil
}

// refund gives back n of the bytes b's request holds.
func (s *Server) refund(b *batch, n int64) {
	n = min(n, b.charged)
	s.budget.used.Add(-n)
	b.charged -= n
}

// discharge gives back all that b's request holds.
func (s *Server) discharge(b *batch) {
	s.budget.used.Add(-b.charged)
	b.charged = 0
}

// readBody reads r's body into b.body under the budget and the body
// timeout. On failure it answers the request and returns the code.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, b *batch) int {
	rc := http.NewResponseController(w)
	limit := s.opts.MaxBody
	err := errTooBig
	if r.ContentLength <= limit {
		if err = s.startRead(rc); err == nil {
			if cl := r.ContentLength; cl >= 0 {
				err = s.readLength(r.Body, b, cl)
			} else {
				err = s.readChunked(r.Body, b, limit)
			}
			s.endRead(rc)
		}
	}
	if err == nil {
		_ = rc.SetReadDeadline(time.Time{}) // nothing may cut the connection while the batch is decided
		return 0
	}
	// The rest of the body is not read: net/http would otherwise read up to
	// 256 KiB of it before answering, and a stalled client never sends it.
	_ = rc.SetReadDeadline(longAgo)
	w.Header().Set("Connection", "close")
	switch {
	case errors.Is(err, errBusy):
		w.Header().Set("Retry-After", retryAfter)
		return fail(w, http.StatusServiceUnavailable, "%d bytes of request bodies in flight, over the limit of %d: retry later", s.budget.used.Load(), s.budget.limit)
	case errors.Is(err, errTooBig) && r.ContentLength > limit:
		return fail(w, http.StatusRequestEntityTooLarge, "body of %d bytes, over the limit of %d", r.ContentLength, limit)
	case errors.Is(err, errTooBig):
		return fail(w, http.StatusRequestEntityTooLarge, "body over the limit of %d bytes", limit)
	case errors.Is(err, errDrained) || isTimeout(err) && s.isDraining():
		return fail(w, http.StatusServiceUnavailable, "server shutting down")
	case isTimeout(err):
		return fail(w, http.StatusRequestTimeout, "body not received within %v (%d bytes read)", s.opts.BodyTimeout, len(b.body))
	}
	return fail(w, http.StatusBadRequest, "reading the body after %d bytes: %v", len(b.body), err)
}

// longAgo is a read deadline that has passed.
var longAgo = time.Unix(1, 0)

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// readLength reads a body of cl bytes, charged at once.
func (s *Server) readLength(r io.Reader, b *batch, cl int64) error {
	if err := s.charge(b, cl); err != nil {
		return err
	}
	if err := b.grow(int(cl)); err != nil {
		return err
	}
	b.body = b.body[:cl]
	n, err := io.ReadFull(r, b.body)
	b.body = b.body[:n]
	if err == io.ErrUnexpectedEOF {
		err = fmt.Errorf("body ended at byte %d of %d", n, cl)
	}
	return err
}

// readChunked reads a body of unknown length, charging it in steps that
// double up to maxStep, and stops past limit bytes.
func (s *Server) readChunked(r io.Reader, b *batch, limit int64) error {
	for {
		if int64(len(b.body)) == b.charged {
			if b.charged > limit {
				return errTooBig
			}
			step := min(max(b.charged, minStep), maxStep, limit+1-b.charged)
			if err := s.charge(b, step); err != nil {
				return err
			}
			if err := b.grow(int(b.charged)); err != nil {
				return err
			}
		}
		n, err := r.Read(b.body[len(b.body):b.charged])
		b.body = b.body[:len(b.body)+n]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// startRead sets the body deadline and registers rc for Drain.
func (s *Server) startRead(rc *http.ResponseController) error {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if s.draining {
		return errDrained
	}
	if s.opts.BodyTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(s.opts.BodyTimeout))
	}
	s.reading[rc] = struct{}{}
	return nil
}

// endRead unregisters rc; the caller then sets the read deadline.
func (s *Server) endRead(rc *http.ResponseController) {
	s.readMu.Lock()
	delete(s.reading, rc)
	s.readMu.Unlock()
}

func (s *Server) isDraining() bool {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	return s.draining
}

// Drain prepares a shutdown: requests still receiving their body are
// answered 503 at once, and so are later ones that send a body; requests
// whose body has arrived are decided and answered as usual. Call it
// before http.Server.Shutdown, so that slow clients do not hold the
// shutdown up.
func (s *Server) Drain() {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	s.draining = true
	for rc := range s.reading {
		_ = rc.SetReadDeadline(longAgo)
	}
}

// InflightBytes is how much of Options.MaxInflightBytes requests hold now.
func (s *Server) InflightBytes() int64 { return s.budget.used.Load() }
