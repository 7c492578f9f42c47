package respserver

import (
	"bytes"
	"context"
	"net"
	"testing"

	"github.com/urldedupd/urldedupd/internal/resp"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// FuzzAnswer: whatever commands a client sends, with or without a token,
// answering them never panics, and every command read gets a reply until
// QUIT (replies are read back with the test's own RESP reader).
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{
		"BF.ADD urls http://a/\r\nBF.MADD k a b a\r\nBF.EXISTS k a\r\nBF.MEXISTS urls x\r\n",
		"HELLO 3 AUTH default tok SETNAME x\r\nBF.INFO urls\r\nBF.INFO urls ITEMS\r\nBF.CARD urls\r\n",
		"AUTH tok\r\nCLIENT SETNAME a\r\nCLIENT GETNAME\r\nCLIENT ID\r\nCLIENT INFO\r\nSELECT 0\r\nPING\r\nECHO x\r\n",
		"COMMAND\r\nCOMMAND COUNT\r\nCOMMAND DOCS\r\nCOMMAND INFO bf.add get\r\nCOMMAND LIST\r\nQUIT\r\nPING\r\n",
		"HELLO 4\r\nHELLO x\r\nHELLO 2 AUTH\r\nCLIENT\r\nCLIENT NOPE\r\nBF.ADD\r\nnope\r\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	st := statetest.Memory(f, "bitmap")
	f.Fuzz(func(t *testing.T, in []byte, token bool) {
		opts := &Options{}
		if token {
			opts.Token = "tok"
		}
		fe := New(st, opts, nil)
		c, peer := net.Pipe() // for CLIENT INFO's address; nothing is written to it
		defer c.Close()
		defer peer.Close()
		cn := fe.newConn(c)
		cn.r = resp.NewReader(bytes.NewReader(in), &resp.Limits{MaxArgs: 64, MaxBulk: 256, MaxInline: 256, MaxCommand: 4096}, nil)
		sent := 0
		for !cn.quit {
			cmds, err := cn.r.ReadCommands()
			if err != nil {
				break
			}
			sent += len(cmds)
			if cn.quit {
				break
			}
			cn.answer(context.Background(), cmds)
		}
		if cn.quit { // the commands after QUIT in its burst got no reply
			return
		}
		replies := countReplies(t, cn.w.Bytes())
		if replies != sent {
			t.Fatalf("%d commands, %d replies:\n%q", sent, replies, cn.w.Bytes())
		}
	})
}

// countReplies counts the top-level replies in b, RESP2 or RESP3.
func countReplies(t *testing.T, b []byte) int {
	n := 0
	for len(b) > 0 {
		b = skipReply(t, b)
		n++
	}
	return n
}

func skipReply(t *testing.T, b []byte) []byte {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 {
		t.Fatalf("a reply without its line: %q", b)
	}
	line, rest := b[:i], b[i+2:]
	num := func() int {
		n, neg := 0, false
		for _, c := range line[1:] {
			if c == '-' {
				neg = true
				continue
			}
			n = n*10 + int(c-'0')
		}
		if neg {
			return -1
		}
		return n
	}
	switch line[0] {
	case '+', '-', ':', '_':
		return rest
	case '$':
		if n := num(); n >= 0 {
			return rest[n+2:]
		}
		return rest
	case '*', '~':
		for range max(num(), 0) {
			rest = skipReply(t, rest)
		}
		return rest
	case '%':
		for range 2 * num() {
			rest = skipReply(t, rest)
		}
		return rest
	}
	t.Fatalf("a reply of type %q", line[0])
	return nil
}
