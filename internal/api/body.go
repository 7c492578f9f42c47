package api

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/urldedupd/urldedupd/internal/frontend"
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

// charge takes n bytes of the budget for b's request.
func (s *Server) charge(b *batch, n int64) error {
	if !s.budget.Take(b.charged, n) {
		return errBusy
	}
	b.charged += n
	return nil
}

// refund gives back n of the bytes b's request holds.
func (s *Server) refund(b *batch, n int64) {
	n = min(n, b.charged)
	s.budget.Give(b.charged, n)
	b.charged -= n
}

// discharge gives back all that b's request holds.
func (s *Server) discharge(b *batch) { s.refund(b, b.charged) }

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
		return s.busy(w)
	case errors.Is(err, errTooBig) && r.ContentLength > limit:
		_ = rc.EnableFullDuplex() // answer now, and read after (linger)
		code := fail(w, http.StatusRequestEntityTooLarge, "body of %d bytes, over the limit of %d", r.ContentLength, limit)
		linger(rc, r.Body, r.ContentLength)
		return code
	case errors.Is(err, errTooBig):
		return fail(w, http.StatusRequestEntityTooLarge, "body over the limit of %d bytes", limit)
	case errors.Is(err, errDrained) || isTimeout(err) && s.isDraining():
		return fail(w, http.StatusServiceUnavailable, "server shutting down")
	case isTimeout(err):
		return fail(w, http.StatusRequestTimeout, "body not received within %v (%d bytes read)", s.opts.BodyTimeout, len(b.body))
	}
	return fail(w, http.StatusBadRequest, "reading the body after %d bytes: %v", len(b.body), err)
}

// busy answers a request that does not fit in the budget now.
func (s *Server) busy(w http.ResponseWriter) int {
	w.Header().Set("Retry-After", retryAfter)
	return fail(w, http.StatusServiceUnavailable, "%d bytes of request bodies in flight, over the limit of %d (beyond its own %d, a request shares %d with the others): retry later",
		s.budget.Used(), s.budget.Limit(), s.budget.Share(), s.budget.Pool())
}

// linger lets a client that declared a body too big to take read the
// answer, as a web server's lingering close does: the answer is sent, then
// up to lingerBytes of the body (of n declared) are read and dropped, for
// at most lingerTime. Closed with the body's bytes unread, the connection
// is reset by the kernel, and a client still sending its body often lost
// the answer with it (TestBadRequests did, one run in 75). A client that
// stops sending holds the connection lingerTime at most.
func linger(rc *http.ResponseController, body io.Reader, n int64) {
	if rc.Flush() != nil {
		return
	}
	if rc.SetReadDeadline(time.Now().Add(lingerTime)) != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, body, min(n, lingerBytes))
}

// The bounds of linger: a body too big is read and dropped up to
// lingerBytes, for lingerTime at most.
const (
	lingerBytes = 1 << 20
	lingerTime  = time.Second
)

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
// double up to maxStep, and stops past limit bytes. The first step is at
// most the request's share, and what the last step took beyond the body is
// given back, so that a small chunked body stays within its share.
func (s *Server) readChunked(r io.Reader, b *batch, limit int64) error {
	first := int64(minStep)
	if share := s.budget.Share(); share > 0 {
		first = min(first, share)
	}
	for {
		if int64(len(b.body)) == b.charged {
			if b.charged > limit {
				return errTooBig
			}
			step := min(max(b.charged, first), maxStep, limit+1-b.charged)
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
			s.refund(b, b.charged-int64(len(b.body)))
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
func (s *Server) InflightBytes() int64 { return s.budget.Used() }

// Budget is the server's in-flight byte budget, for metrics.
func (s *Server) Budget() *frontend.Budget { return s.budget }
