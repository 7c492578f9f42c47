package respserver

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/resp"
)

// Connection commands: AUTH, HELLO, CLIENT, COMMAND.

const (
	errNoPassword = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errWrongPass  = "WRONGPASS invalid username-password pair or user is disabled."
	// serverVersion is the Redis version HELLO reports: the one whose
	// replies the commands follow (clients look at it to choose features).
	serverVersion = "7.0.0"
)

// auth checks a token (AUTH's last argument; the user name, if given, is
// not looked at) and returns the error reply, or "".
func (cn *conn) auth(token []byte) string {
	switch {
	case cn.f.opts.Token == "":
		return errNoPassword
	case !frontend.TokenMatches(string(token), cn.f.opts.Token):
		return errWrongPass
	}
	cn.authd = true
	return ""
}

// hello: HELLO [protover [AUTH user pass] [SETNAME name]].
func (cn *conn) hello(s *step) {
	args := s.args[1:]
	proto := cn.w.Protocol()
	if len(args) > 0 {
		v, err := strconv.Atoi(string(args[0]))
		if err != nil {
			s.err = "ERR Protocol version is not an integer or out of range"
			return
		}
		if v != 2 && v != 3 {
			s.err = "NOPROTO unsupported protocol version"
			return
		}
		proto, args = v, args[1:]
	}
	var name []byte
	setName := false
	for len(args) > 0 {
		switch strings.ToUpper(string(args[0])) {
		case "AUTH":
			if len(args) < 3 {
				s.err = "ERR Syntax error in HELLO option 'auth'"
				return
			}
			if s.err = cn.auth(args[2]); s.err != "" {
				return
			}
			args = args[3:]
		case "SETNAME":
			if len(args) < 2 {
				s.err = "ERR Syntax error in HELLO option 'setname'"
				return
			}
			name, setName, args = args[1], true, args[2:]
		default:
			s.err = fmt.Sprintf("ERR Syntax error in HELLO option '%s'", clip(args[0]))
			return
		}
	}
	if !cn.authd {
		s.err = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
		return
	}
	if setName {
		if s.err = cn.setName(name); s.err != "" {
			return
		}
	}
	s.proto = proto
	cn.w.SetProtocol(proto)
}

func (cn *conn) helloReply() {
	w := &cn.w
	w.Map(7)
	w.BulkString("server")
	w.BulkString("urldedupd")
	w.BulkString("version")
	w.BulkString(serverVersion)
	w.BulkString("proto")
	w.Int(int64(w.Protocol()))
	w.BulkString("id")
	w.Int(cn.id)
	w.BulkString("mode")
	w.BulkString("standalone")
	w.BulkString("role")
	w.BulkString("master")
	w.BulkString("modules")
	w.Array(0)
}

// setName sets the connection's name, as Redis checks it.
func (cn *conn) setName(name []byte) string {
	for _, c := range name {
		if c < '!' || c > '~' {
			return "ERR Client names cannot contain spaces, newlines or special characters."
		}
	}
	cn.name = string(name)
	return ""
}

// client: CLIENT SETNAME name | GETNAME | ID | SETINFO attr value | INFO.
func (cn *conn) client(s *step) {
	sub := strings.ToUpper(string(s.args[1]))
	want := map[string]int{"SETNAME": 3, "GETNAME": 2, "ID": 2, "SETINFO": 4, "INFO": 2}[sub]
	switch {
	case want == 0:
		s.err = fmt.Sprintf("ERR unknown subcommand '%s'. Try CLIENT HELP.", clip(s.args[1]))
	case len(s.args) != want:
		s.err = fmt.Sprintf("ERR wrong number of arguments for 'client|%s' command", strings.ToLower(sub))
	case sub == "SETNAME":
		s.err = cn.setName(s.args[2])
	}
}

func (cn *conn) clientReply(s *step) {
	w := &cn.w
	switch strings.ToUpper(string(s.args[1])) {
	case "GETNAME":
		if cn.name == "" {
			w.Null()
		} else {
			w.BulkString(cn.name)
		}
	case "ID":
		w.Int(cn.id)
	case "INFO":
		w.BulkString(fmt.Sprintf("id=%d addr=%s name=%s resp=%d\n", cn.id, cn.c.RemoteAddr(), cn.name, w.Protocol()))
	default:
		w.Simple("OK")
	}
}

// commandReply answers COMMAND [COUNT | DOCS | INFO name… | LIST]: enough
// for redis-cli and for clients that look commands up.
func commandReply(w *resp.Writer, args [][]byte) {
	sub := ""
	if len(args) > 0 {
		sub = strings.ToUpper(string(args[0]))
	}
	switch sub {
	case "COUNT":
		w.Int(int64(nOps - 1))
	case "DOCS":
		w.Map(0) // no documentation: redis-cli falls back to its own hints
	case "LIST":
		w.Array(int(nOps - 1))
		for _, c := range commands[1:] {
			w.BulkString(strings.ToLower(c.name))
		}
	case "INFO":
		w.Array(len(args) - 1)
		for _, name := range args[1:] {
			if o := lookup(name); o != opUnknown {
				commandInfo(w, &commands[o])
			} else {
				w.Null()
			}
		}
	default:
		w.Array(int(nOps - 1))
		for _, c := range commands[1:] {
			commandInfo(w, &c)
		}
	}
}

// commandInfo writes a command as Redis 7's COMMAND does: name, arity,
// flags, first key, last key, key step, ACL categories, tips, key specs,
// subcommands.
func commandInfo(w *resp.Writer, c *command) {
	w.Array(10)
	w.BulkString(strings.ToLower(c.name))
	w.Int(int64(c.arity))
	w.Set(len(c.flags))
	for _, f := range c.flags {
		w.Simple(f)
	}
	w.Int(int64(c.firstKey))
	w.Int(int64(c.firstKey))
	w.Int(int64(c.firstKey))
	w.Set(0)
	w.Array(0)
	w.Array(0)
	w.Array(0)
}
