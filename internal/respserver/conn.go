package respserver

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"time"

	"github.com/urldedupd/urldedupd/internal/resp"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// conn is one client connection and its scratch space, reused from burst
// to burst.
type conn struct {
	f     *FrontEnd
	c     net.Conn
	in    deadlineReader
	r     *resp.Reader
	w     resp.Writer
	id    int64
	name  string // CLIENT SETNAME
	authd bool

	sign  *signer
	steps []step
	sigs  []signature.Signature
	seen  []bool
	quit  bool // QUIT: answer, then close

	ev *evConn // served by an event loop: its state there; nil when by a goroutine
}

// Scratch kept between bursts only while this small. The steps (about
// 90 bytes a command) are not charged to the budget: a burst holds at
// most as many commands as the reader's charged slices (72 bytes a
// command and more) let it.
const (
	keepItems = 16384
	keepSteps = 4096
	keepReply = 64 << 10
)

func (f *FrontEnd) newConn(c net.Conn) *conn {
	cn := &conn{f: f, c: c, id: f.ids.Add(1), authd: f.opts.Token == ""}
	cn.in = deadlineReader{cn: cn}
	cn.r = resp.NewReader(&cn.in, f.readerLimits(), f.budget)
	cn.sign = newSigner(f.st, f.opts.DefaultKey, f.opts.MaxItem)
	return cn
}

// readerLimits are a connection's Reader's limits.
func (f *FrontEnd) readerLimits() *resp.Limits {
	return &resp.Limits{
		MaxArgs:    f.opts.MaxItems + 2, // BF.MADD key item…
		MaxBulk:    2 * f.opts.MaxItem,  // an item a little over: an error, the connection kept
		MaxInline:  f.opts.MaxItem + 256,
		MaxCommand: f.opts.MaxCommand,
		Buffer:     bufferSize,
	}
}

// deadlineReader is the connection as the Reader reads it: before each
// read it sets the deadline, the idle timeout between commands and the
// command timeout from the first byte of one, and it reads nothing once
// the front end drains.
type deadlineReader struct {
	cn    *conn
	begun time.Time // when the command being read was first seen unfinished
	set   time.Time // the read deadline last set
}

var errDraining = errors.New("respserver: draining")

func (d *deadlineReader) Read(p []byte) (int, error) {
	cn := d.cn
	o := &cn.f.opts
	var deadline time.Time
	switch {
	case cn.r.Pending() > 0:
		if d.begun.IsZero() {
			d.begun = time.Now()
		}
		deadline = d.begun.Add(o.CommandTimeout)
	default:
		d.begun = time.Time{}
		if o.IdleTimeout > 0 {
			now := time.Now()
			if d.set.Sub(now) > o.IdleTimeout-o.IdleTimeout/16 {
				deadline = d.set // set lately enough: a timer change a command saved
				break
			}
			deadline = now.Add(o.IdleTimeout)
		}
	}
	if !deadline.Equal(d.set) {
		d.set = deadline
		cn.c.SetReadDeadline(deadline)
	}
	if cn.f.draining.Load() { // after the deadline: Drain's wake-up is not overwritten
		return 0, errDraining
	}
	return cn.c.Read(p)
}

// wake makes a read waiting for a command return, for Drain.
func (cn *conn) wake() { cn.c.SetReadDeadline(time.Now()) }

// serve answers bursts of commands until the client leaves, errs, quits,
// or the front end drains.
func (cn *conn) serve() {
	defer cn.c.Close()
	defer cn.r.Release()
	var writeBy time.Time // the write deadline set
	for !cn.quit && !cn.f.draining.Load() {
		cmds, err := cn.r.ReadCommands()
		if err != nil {
			cn.failed(err)
			return
		}
		cn.in.begun = time.Time{} // a command left unfinished is a new one: its clock starts at the next read
		start := time.Now()
		cn.answer(context.Background(), cmds)
		if now, t := time.Now(), cn.f.opts.CommandTimeout; writeBy.Sub(now) < t-t/16 {
			writeBy = now.Add(t) // not at every burst: a timer change saved
			cn.c.SetWriteDeadline(writeBy)
		}
		_, werr := cn.c.Write(cn.w.Bytes())
		cn.observe(time.Since(start))
		cn.answered()
		cn.w.Reset(keepReply)
		if werr != nil {
			return
		}
	}
}

// answered drops a burst's steps, whose replies are written into cn.w,
// and the scratch a big burst grew.
func (cn *conn) answered() {
	clear(cn.steps) // their arguments point into the reader's buffer, which may be dropped
	if cap(cn.sigs) > keepItems {
		cn.sigs, cn.seen = nil, nil
	}
	if cap(cn.steps) > keepSteps {
		cn.steps = nil
	}
}

// failed answers what can be answered of a read that failed: a protocol
// error or a command over the budget, as Redis does before it closes.
func (cn *conn) failed(err error) {
	reply := cn.failReply(err)
	cn.r.Release() // give the budget back before lingering
	if reply == "" {
		return
	}
	cn.w.Reset(keepReply)
	cn.w.Error(reply)
	cn.c.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := cn.c.Write(cn.w.Bytes()); err == nil {
		cn.linger()
	}
}

// failReply is the error reply to a read that failed, or "" for none (the
// client left, or was idle), and reports a protocol error to Observe.
func (cn *conn) failReply(err error) string {
	var pe *resp.ProtocolError
	var reply string
	switch {
	case errors.As(err, &pe):
		reply = pe.Reply()
	case errors.Is(err, resp.ErrBusy):
		reply = "ERR busy: the server's bytes in flight are at their limit, retry later"
	case errors.Is(err, errDraining) || errors.Is(err, os.ErrDeadlineExceeded) && cn.f.draining.Load():
		if cn.r.Pending() > 0 {
			reply = "ERR shutting down: command not read"
		}
	case errors.Is(err, os.ErrDeadlineExceeded):
		if cn.r.Pending() > 0 {
			reply = "ERR timeout: command not complete within " + cn.f.opts.CommandTimeout.String()
			cn.f.log.Debug("RESP client stalled mid-command", "remote", cn.c.RemoteAddr().String())
		}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
	}
	if reply != "" && cn.f.opts.Observe != nil {
		cn.f.opts.Observe("protocol", reply[:3], 0, 0, 0)
	}
	return reply
}

// linger ends the connection so that the client reads the error written
// rather than a reset: it half-closes it, then reads and drops what the
// client still sends, for a moment.
func (cn *conn) linger() {
	cw, ok := cn.c.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	cn.c.SetReadDeadline(time.Now().Add(lingerTime))
	io.CopyN(io.Discard, cn.c, lingerBytes)
}

// What linger waits for, at most.
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 4 << 20
)
