package respserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urldedupd/urldedupd/internal/resp"
)

// op is a command the server knows.
type op uint8

const (
	opUnknown op = iota
	opBFAdd
	opBFMAdd
	opBFExists
	opBFMExists
	opBFInfo
	opBFCard
	opPing
	opEcho
	opHello
	opAuth
	opClient
	opSelect
	opQuit
	opCommand
	opBFForget
	nOps
)

// command describes one for COMMAND: its name (as metrics label it, in
// upper case), arity (negative: at least), flags and first key.
type command struct {
	name     string
	arity    int
	flags    []string
	firstKey int
}

var commands = [nOps]command{
	opUnknown:   {name: "unknown"},
	opBFAdd:     {"BF.ADD", 3, []string{"write", "denyoom", "fast"}, 1},
	opBFMAdd:    {"BF.MADD", -3, []string{"write", "denyoom", "fast"}, 1},
	opBFExists:  {"BF.EXISTS", 3, []string{"readonly", "fast"}, 1},
	opBFMExists: {"BF.MEXISTS", -3, []string{"readonly", "fast"}, 1},
	opBFInfo:    {"BF.INFO", -2, []string{"readonly", "fast"}, 1},
	opBFCard:    {"BF.CARD", 2, []string{"readonly", "fast"}, 1},
	opPing:      {"PING", -1, []string{"fast"}, 0},
	opEcho:      {"ECHO", 2, []string{"fast"}, 0},
	opHello:     {"HELLO", -1, []string{"noscript", "loading", "stale", "fast", "no_auth"}, 0},
	opAuth:      {"AUTH", -2, []string{"noscript", "loading", "stale", "fast", "no_auth"}, 0},
	opClient:    {"CLIENT", -2, []string{"noscript", "loading", "stale"}, 0},
	opSelect:    {"SELECT", 2, []string{"loading", "stale", "fast"}, 0},
	opQuit:      {"QUIT", -1, []string{"noscript", "loading", "stale", "fast", "no_auth"}, 0},
	opCommand:   {"COMMAND", -1, []string{"loading", "stale"}, 0},
	opBFForget:  {"BF.FORGET", -3, []string{"write", "fast"}, 1},
}

var byName = func() map[string]op {
	m := map[string]op{}
	for i, c := range commands[1:] {
		m[c.name] = op(i + 1)
	}
	return m
}()

// lookup finds a command by its name in any case, allocating nothing.
func lookup(name []byte) op {
	var up [16]byte
	if len(name) > len(up) {
		return opUnknown
	}
	for i, c := range name {
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up[i] = c
	}
	return byName[string(up[:len(name)])]
}

// step is a command of a burst, planned before the burst's decisions and
// answered after them.
type step struct {
	op    op
	args  [][]byte
	proto int    // the protocol its reply is written in
	err   string // its error reply, if it failed
	first int    // its items' signatures: sigs[first:first+n]
	n     int
	dry   bool // BF.EXISTS, BF.MEXISTS
	kind  kind // how its items are decided: added, dry run, forgotten
}

// kind is how a BF command's items go to the state; a run of consecutive
// commands of one kind is one batch.
type kind uint8

const (
	kindAdd kind = iota
	kindDry
	kindForget
)

// answer plans, decides and answers a burst of commands into cn.w, in
// order.
func (cn *conn) answer(ctx context.Context, cmds []resp.Command) {
	cn.steps, cn.sigs = cn.steps[:0], cn.sigs[:0]
	for _, c := range cmds {
		if cn.quit {
			break // Redis reads nothing after QUIT
		}
		cn.steps = append(cn.steps, step{op: lookup(c.Args[0]), args: c.Args})
		s := &cn.steps[len(cn.steps)-1]
		cn.plan(s)
		if s.proto == 0 {
			s.proto = cn.w.Protocol()
		}
	}
	cn.decide(ctx)
	for i := range cn.steps {
		cn.reply(&cn.steps[i])
	}
}

// plan checks a command, signs its items and applies what it changes in
// the connection (AUTH, HELLO, QUIT), in the order of the burst.
func (cn *conn) plan(s *step) {
	if !cn.authd && s.op != opAuth && s.op != opHello && s.op != opQuit {
		s.err = "NOAUTH Authentication required."
		return
	}
	c := &commands[s.op]
	if s.op == opUnknown {
		s.err = fmt.Sprintf("ERR unknown command '%s'", clip(s.args[0]))
		return
	}
	if n := len(s.args); c.arity > 0 && n != c.arity || c.arity < 0 && n < -c.arity {
		s.err = fmt.Sprintf("ERR wrong number of arguments for '%s' command", strings.ToLower(c.name))
		return
	}
	switch s.op {
	case opBFAdd, opBFMAdd, opBFExists, opBFMExists, opBFForget:
		cn.planItems(s)
	case opBFInfo:
		if len(s.args) > 3 {
			s.err = "ERR wrong number of arguments for 'bf.info' command"
		} else if len(s.args) == 3 && infoField(s.args[2]) < 0 {
			s.err = "ERR Invalid information value"
		}
	case opPing:
		if len(s.args) > 2 {
			s.err = "ERR wrong number of arguments for 'ping' command"
		}
	case opAuth:
		if len(s.args) > 3 {
			s.err = "ERR syntax error"
			return
		}
		s.err = cn.auth(s.args[len(s.args)-1])
	case opHello:
		cn.hello(s)
	case opClient:
		cn.client(s)
	case opSelect:
		if string(s.args[1]) != "0" {
			s.err = "ERR DB index is out of range"
		}
	case opQuit:
		cn.quit = true
	case opCommand:
		if len(s.args) > 1 {
			switch strings.ToUpper(string(s.args[1])) {
			case "COUNT", "DOCS", "INFO", "LIST":
			default:
				s.err = fmt.Sprintf("ERR unknown subcommand '%s'. Try COMMAND HELP.", clip(s.args[1]))
			}
		}
	}
}

// planItems checks and signs the items of a BF command.
func (cn *conn) planItems(s *step) {
	key, items := s.args[1], s.args[2:]
	s.dry = s.op == opBFExists || s.op == opBFMExists
	switch {
	case s.dry:
		s.kind = kindDry
	case s.op == opBFForget:
		s.kind = kindForget
	}
	if s.err = checkKey(key); s.err != "" {
		return
	}
	if len(items) > cn.f.opts.MaxItems {
		s.err = fmt.Sprintf("ERR %d items, over the limit of %d a command", len(items), cn.f.opts.MaxItems)
		return
	}
	multi := s.op == opBFMAdd || s.op == opBFMExists || s.op == opBFForget
	for i, it := range items {
		if !multi {
			i = -1
		}
		if s.err = cn.sign.checkItem(i+1, it); s.err != "" {
			return
		}
	}
	s.first, s.n = len(cn.sigs), len(items)
	for _, it := range items {
		cn.sigs = append(cn.sigs, cn.sign.sign(key, it))
	}
}

// decide decides the burst's signatures: each run of consecutive BF
// commands of one kind (adds, or dry runs) is one batch through the
// state, in order, so that a later command sees what an earlier one
// added.
func (cn *conn) decide(ctx context.Context) {
	n := len(cn.sigs)
	if cap(cn.seen) < n {
		cn.seen = make([]bool, n, cap(cn.sigs))
	}
	cn.seen = cn.seen[:n]
	lo := -1 // first step of the run
	for i := range cn.steps {
		s := &cn.steps[i]
		if s.n == 0 {
			continue
		}
		if lo >= 0 && s.kind != cn.steps[lo].kind {
			cn.run(ctx, lo, i)
			lo = -1
		}
		if lo < 0 {
			lo = i
		}
	}
	if lo >= 0 {
		cn.run(ctx, lo, len(cn.steps))
	}
}

// run decides the signatures of steps[lo:hi] as one batch; when the state
// cannot, each of those steps fails.
func (cn *conn) run(ctx context.Context, lo, hi int) {
	from, to, dry, k := cn.steps[lo].first, len(cn.sigs), cn.steps[lo].dry, cn.steps[lo].kind
	for i := hi; i < len(cn.steps); i++ {
		if cn.steps[i].n > 0 {
			to = cn.steps[i].first
			break
		}
	}
	for i := from; i < to; i += chunk {
		end := min(i+chunk, to)
		var err error
		if k == kindForget {
			err = cn.f.st.Forget(ctx, cn.sigs[i:end], cn.seen[i:end]) // seen: was held
		} else {
			err = cn.f.st.Decide(ctx, cn.sigs[i:end], cn.seen[i:end], dry)
		}
		if err != nil {
			msg := stateError(err)
			for j := lo; j < hi; j++ {
				if cn.steps[j].n > 0 {
					cn.steps[j].err = msg
				}
			}
			return
		}
	}
}

// reply writes a step's reply.
func (cn *conn) reply(s *step) {
	w := &cn.w
	w.SetProtocol(s.proto)
	if s.err != "" {
		w.Error(s.err)
		return
	}
	switch s.op {
	case opBFAdd:
		w.Int(b2i(!cn.seen[s.first]))
	case opBFExists:
		w.Int(b2i(cn.seen[s.first]))
	case opBFForget:
		w.Array(s.n)
		for _, was := range cn.seen[s.first : s.first+s.n] {
			w.Int(b2i(was))
		}
	case opBFMAdd, opBFMExists:
		w.Array(s.n)
		for _, seen := range cn.seen[s.first : s.first+s.n] {
			w.Int(b2i(seen == s.dry))
		}
	case opBFInfo, opBFCard:
		cn.info(s)
	case opPing:
		if len(s.args) == 2 {
			w.Bulk(s.args[1])
		} else {
			w.Simple("PONG")
		}
	case opEcho:
		w.Bulk(s.args[1])
	case opHello:
		cn.helloReply()
	case opClient:
		cn.clientReply(s)
	case opCommand:
		commandReply(w, s.args[1:])
	default: // AUTH, SELECT, QUIT
		w.Simple("OK")
	}
}

// observe reports each command of the burst answered in d.
func (cn *conn) observe(d time.Duration) {
	obs := cn.f.opts.Observe
	if obs == nil {
		return
	}
	for i := range cn.steps {
		s := &cn.steps[i]
		status, nNew, nDup := "ok", 0, 0
		if s.err != "" {
			status, _, _ = strings.Cut(s.err, " ")
		} else if s.kind != kindForget { // forgetting finds nothing new or seen
			for _, seen := range cn.seen[s.first : s.first+s.n] {
				nDup += int(b2i(seen))
			}
			nNew = s.n - nDup
		}
		obs(commands[s.op].name, status, d, nNew, nDup)
	}
}

// stateError is the reply to a failure of the state: "ERR state: …",
// with the prefix once (the state package's errors carry it already).
func stateError(err error) string {
	return "ERR state: " + strings.TrimPrefix(err.Error(), "state: ")
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// clip shortens a client's bytes for an error message.
func clip(b []byte) []byte {
	if len(b) > 128 {
		return b[:128]
	}
	return b
}
