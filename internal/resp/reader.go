package resp

import (
	"bytes"
	"fmt"
	"io"
)

// Limits bound what one connection's commands may cost. Zero fields take
// the defaults.
type Limits struct {
	MaxArgs    int // arguments of a command, its name included; default DefaultMaxArgs
	MaxBulk    int // bytes of one argument; default DefaultMaxBulk
	MaxInline  int // bytes of an inline command's line; default DefaultMaxInline
	MaxCommand int // bytes of one command as sent; default DefaultMaxCommand
	// Buffer is the size the buffer starts with and goes back to once a
	// bigger command is answered; default DefaultBuffer.
	Buffer int
}

// Defaults of Limits.
const (
	DefaultMaxArgs    = 1 << 16
	DefaultMaxBulk    = 1 << 20
	DefaultMaxInline  = 64 << 10
	DefaultMaxCommand = 32 << 20
	DefaultBuffer     = 16 << 10
)

// withDefaults fills the zero fields of l.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxArgs, DefaultMaxArgs)
	def(&l.MaxBulk, DefaultMaxBulk)
	def(&l.MaxInline, DefaultMaxInline)
	def(&l.MaxCommand, DefaultMaxCommand)
	def(&l.Buffer, DefaultBuffer)
	l.Buffer = min(l.Buffer, l.MaxCommand)
	return l
}

// Budget is what a Reader charges the memory it holds to, shared by the
// connections of a server (*frontend.Budget is one). Take reports whether
// n more bytes fit for a holder of held bytes, and takes them; Give gives
// n back.
type Budget interface {
	Take(held, n int64) bool
	Give(held, n int64)
}

// Command is a command as read: its arguments, the name first.
type Command struct {
	Args [][]byte
}

// span is an argument's place in the buffer.
type span struct{ off, n int }

// Bytes charged for each element of the Reader's slices.
const (
	spanCost = 16
	argCost  = 24
	endCost  = 8
	cmdCost  = 24
	// headerMax is the longest "*N\r\n" or "$N\r\n" line accepted (after
	// its first byte): a sign, 18 digits and CRLF.
	headerMax = 21
)

// Reader reads commands from a connection. It is not safe for concurrent
// use.
type Reader struct {
	rd     io.Reader
	lim    Limits
	budget Budget
	held   int64 // bytes charged to budget

	buf   []byte // len(buf) is its capacity; data in buf[:end]
	end   int
	begin int // where the command being read starts
	pos   int // where parsing resumes
	want  int // arguments the multibulk being read announced; 0 between commands

	spans   []span // arguments of the complete commands, then of the one being read
	pending int    // index in spans of the first argument of the one being read
	ends    []int  // for each complete command, the end of its arguments in spans
	cmds    []Command
	args    [][]byte
	err     error // returned once the commands before it have been
}

// NewReader returns a Reader of rd with limits lim (nil: the defaults),
// charging what it holds to budget (nil: to nothing).
func NewReader(rd io.Reader, lim *Limits, budget Budget) *Reader {
	r := &Reader{rd: rd, budget: budget}
	if lim != nil {
		r.lim = *lim
	}
	r.lim = r.lim.withDefaults()
	return r
}

// Limits returns the Reader's limits, defaults filled in.
func (r *Reader) Limits() Limits { return r.lim }

// ReadCommands returns every complete command in the buffer, reading from
// the connection first only when there is none. The commands and their
// arguments are valid until the next call.
//
// Errors: a *ProtocolError (malformed input or over a limit: the
// connection cannot go on), ErrBusy (the Budget refused memory),
// io.EOF (the client closed between commands), io.ErrUnexpectedEOF (it
// closed in the middle of one), or the connection's own (a timeout). A
// protocol error or ErrBusy met after complete commands is returned by
// the next call, after those commands.
func (r *Reader) ReadCommands() ([]Command, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := r.reset(); err != nil {
		r.err = err
		return nil, err
	}
	for empty := 0; ; {
		err := r.parse()
		if len(r.ends) > 0 {
			r.err = err
			if err := r.commands(); err != nil {
				r.err = err
				return nil, err
			}
			return r.cmds, nil
		}
		if err != nil {
			r.err = err
			return nil, err
		}
		n, err := r.fill()
		if err != nil {
			return nil, err
		}
		if empty = empty + 1; n > 0 {
			empty = 0
		} else if empty > 100 {
			return nil, io.ErrNoProgress
		}
	}
}

// Pending is how many bytes of a command not yet complete the Reader
// holds: 0 between commands. A server times out a client that leaves a
// command unfinished differently from one that is idle.
func (r *Reader) Pending() int { return r.end - r.begin }

// Held is how many bytes the Reader holds (its buffer and slices), as
// charged to its Budget.
func (r *Reader) Held() int64 { return r.held }

// Release gives back all the Reader holds, for a connection that ends.
// The Reader must not be used after.
func (r *Reader) Release() {
	r.buf, r.spans, r.ends, r.cmds, r.args = nil, nil, nil, nil, nil
	if r.budget != nil && r.held > 0 {
		r.budget.Give(r.held, r.held)
	}
	r.held = 0
}

// reset drops the commands last returned: the command being read moves
// to the front of the buffer, which goes back to its first size when it
// has grown for a bigger command.
func (r *Reader) reset() error {
	r.cmds, r.args, r.ends = r.cmds[:0], r.args[:0], r.ends[:0]
	n := copy(r.spans, r.spans[r.pending:])
	r.spans, r.pending = r.spans[:n], 0
	if r.buf == nil || len(r.buf) > r.lim.Buffer && r.end-r.begin <= r.lim.Buffer/2 {
		clear(r.args[:cap(r.args)]) // no slice of the old buffer may keep it alive
		clear(r.cmds[:cap(r.cmds)])
		nb := make([]byte, r.lim.Buffer)
		r.end = copy(nb, r.buf[r.begin:r.end])
		r.shift(r.begin)
		r.buf = nb
		r.dropSlices()
		return r.recharge()
	}
	r.compact()
	if cap(r.spans) > keepSpans {
		r.dropSlices()
		return r.recharge()
	}
	return nil
}

// keepSpans is the most arguments whose slices the Reader keeps from one
// burst to the next (a burst of many tiny inline commands makes more).
const keepSpans = 4096

// dropSlices lets slices grown for a big burst go.
func (r *Reader) dropSlices() {
	if cap(r.spans) > keepSpans || cap(r.spans) > r.lim.Buffer/spanCost {
		r.spans = append([]span(nil), r.spans...)
		r.args, r.ends, r.cmds = nil, nil, nil
	}
}

// compact moves the command being read to the front of the buffer.
func (r *Reader) compact() {
	if r.begin == 0 {
		return
	}
	r.end = copy(r.buf, r.buf[r.begin:r.end])
	r.shift(r.begin)
}

// shift notes that the buffer's data moved d bytes towards its front.
func (r *Reader) shift(d int) {
	r.begin -= d
	r.pos -= d
	for i := range r.spans {
		r.spans[i].off -= d
	}
}

// fill reads into the buffer, growing it first when it is full.
func (r *Reader) fill() (int, error) {
	if r.end == len(r.buf) {
		if err := r.grow(); err != nil {
			r.err = err
			return 0, err
		}
	}
	n, err := r.rd.Read(r.buf[r.end:])
	r.end += n
	switch {
	case n > 0:
		return n, nil
	case err == io.EOF && r.end > r.begin:
		return 0, io.ErrUnexpectedEOF
	}
	return 0, err
}

// grow makes room in a full buffer: by moving the command being read to
// its front, else by doubling it, up to MaxCommand.
func (r *Reader) grow() error {
	if r.begin > 0 {
		r.compact()
		return nil
	}
	if r.end >= r.lim.MaxCommand {
		return r.tooBig()
	}
	n := min(2*len(r.buf), r.lim.MaxCommand)
	if err := r.take(int64(n - len(r.buf))); err != nil {
		return err
	}
	nb := make([]byte, n)
	copy(nb, r.buf[:r.end])
	r.buf = nb
	return nil
}

func (r *Reader) tooBig() error {
	return &ProtocolError{Msg: fmt.Sprintf("command over the limit of %d bytes", r.lim.MaxCommand)}
}

// take charges n more bytes to the budget.
func (r *Reader) take(n int64) error {
	if r.budget == nil || n <= 0 {
		r.held += max(n, 0)
		return nil
	}
	if !r.budget.Take(r.held, n) {
		return ErrBusy
	}
	r.held += n
	return nil
}

// recharge brings what is charged to what the buffer and slices hold.
func (r *Reader) recharge() error {
	now := int64(len(r.buf)) + int64(cap(r.spans))*spanCost + int64(cap(r.args))*argCost +
		int64(cap(r.ends))*endCost + int64(cap(r.cmds))*cmdCost
	switch {
	case now > r.held:
		return r.take(now - r.held)
	case now < r.held:
		if r.budget != nil {
			r.budget.Give(r.held, r.held-now)
		}
		r.held = now
	}
	return nil
}

// parse parses the complete commands from pos on, stopping at the end of
// the data or at an error.
func (r *Reader) parse() error {
	for r.pos < r.end {
		if r.want == 0 {
			r.begin = r.pos
			if r.buf[r.pos] != '*' {
				done, err := r.inline()
				if err != nil || !done {
					return err
				}
				continue
			}
			n, next, err := r.header(r.pos+1, "invalid multibulk length")
			if err != nil || next < 0 {
				return err
			}
			if n > r.lim.MaxArgs {
				return &ProtocolError{Msg: fmt.Sprintf("invalid multibulk length (%d arguments, over the limit of %d)", n, r.lim.MaxArgs)}
			}
			r.pos = next
			if n <= 0 { // an empty command: Redis skips it
				continue
			}
			r.want, r.pending = n, len(r.spans)
		}
		for len(r.spans)-r.pending < r.want {
			if r.pos >= r.end {
				return nil
			}
			if c := r.buf[r.pos]; c != '$' {
				return &ProtocolError{Msg: fmt.Sprintf("expected '$', got '%s'", printable(c))}
			}
			n, next, err := r.header(r.pos+1, "invalid bulk length")
			if err != nil || next < 0 {
				return err
			}
			if n < 0 || n > r.lim.MaxBulk {
				return &ProtocolError{Msg: fmt.Sprintf("invalid bulk length (%d bytes, the limit is %d)", n, r.lim.MaxBulk)}
			}
			stop := next + n + 2
			if stop-r.begin > r.lim.MaxCommand {
				return r.tooBig()
			}
			if stop > r.end {
				return nil
			}
			if r.buf[stop-2] != '\r' || r.buf[stop-1] != '\n' {
				return &ProtocolError{Msg: "expected CRLF after a bulk string"}
			}
			if err := r.addSpan(span{next, n}); err != nil {
				return err
			}
			r.pos = stop
		}
		if err := r.complete(); err != nil {
			return err
		}
	}
	return nil
}

// complete notes that the command being read is complete.
func (r *Reader) complete() error {
	c := cap(r.ends)
	r.ends = append(r.ends, len(r.spans))
	r.want, r.begin, r.pending = 0, r.pos, len(r.spans)
	if cap(r.ends) != c {
		return r.recharge()
	}
	return nil
}

func (r *Reader) addSpan(s span) error {
	c := cap(r.spans)
	r.spans = append(r.spans, s)
	if cap(r.spans) != c {
		return r.recharge()
	}
	return nil
}

// header parses the integer of a "*N\r\n" or "$N\r\n" line whose digits
// start at p, and returns it and where the line ends; next is -1 when the
// line is not complete yet.
func (r *Reader) header(p int, bad string) (n, next int, err error) {
	i := bytes.IndexByte(r.buf[p:min(r.end, p+headerMax)], '\n')
	if i < 0 {
		if r.end-p >= headerMax {
			return 0, 0, &ProtocolError{Msg: bad}
		}
		return 0, -1, nil
	}
	line := r.buf[p : p+i]
	if len(line) < 2 || line[len(line)-1] != '\r' {
		return 0, 0, &ProtocolError{Msg: bad}
	}
	line = line[:len(line)-1]
	neg := line[0] == '-'
	if neg {
		line = line[1:]
	}
	if len(line) == 0 {
		return 0, 0, &ProtocolError{Msg: bad}
	}
	for _, c := range line {
		if c < '0' || c > '9' {
			return 0, 0, &ProtocolError{Msg: bad}
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, p + i + 1, nil
}

// inline parses an inline command at pos: one line, its arguments
// separated by spaces or tabs. done is false when the line is not
// complete yet.
func (r *Reader) inline() (done bool, err error) {
	i := bytes.IndexByte(r.buf[r.pos:r.end], '\n')
	if i < 0 {
		if r.end-r.pos > r.lim.MaxInline {
			return false, &ProtocolError{Msg: "too big inline request"}
		}
		return false, nil
	}
	if i > r.lim.MaxInline {
		return false, &ProtocolError{Msg: "too big inline request"}
	}
	line := r.buf[r.pos : r.pos+i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	r.pending = len(r.spans)
	for j := 0; j < len(line); {
		for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
			j++
		}
		k := j
		for k < len(line) && line[k] != ' ' && line[k] != '\t' {
			k++
		}
		if k > j {
			if len(r.spans)-r.pending >= r.lim.MaxArgs {
				return false, &ProtocolError{Msg: fmt.Sprintf("too many arguments in an inline request (the limit is %d)", r.lim.MaxArgs)}
			}
			if err := r.addSpan(span{r.pos + j, k - j}); err != nil {
				return false, err
			}
		}
		j = k
	}
	r.pos += i + 1
	if len(r.spans) == r.pending { // a blank line: skipped
		r.begin = r.pos
		return true, nil
	}
	return true, r.complete()
}

// commands makes the complete commands' argument slices.
func (r *Reader) commands() error {
	ca, cc := cap(r.args), cap(r.cmds)
	r.args = r.args[:0]
	for _, s := range r.spans[:r.ends[len(r.ends)-1]] {
		r.args = append(r.args, r.buf[s.off:s.off+s.n:s.off+s.n])
	}
	r.cmds = r.cmds[:0]
	start := 0
	for _, e := range r.ends {
		r.cmds = append(r.cmds, Command{Args: r.args[start:e:e]})
		start = e
	}
	if cap(r.args) != ca || cap(r.cmds) != cc {
		return r.recharge()
	}
	return nil
}

// printable shows a byte in a message.
func printable(c byte) string {
	if c >= ' ' && c < 0x7f {
		return string(rune(c))
	}
	return fmt.Sprintf("\\x%02x", c)
}
