package resp_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/urldedupd/urldedupd/internal/resp"
)

var testLimits = resp.Limits{MaxArgs: 8, MaxBulk: 64, MaxInline: 64, MaxCommand: 256, Buffer: 16}

type readerCase struct {
	name string
	in   []byte
	cmds []string // each command's arguments, quoted and joined by spaces
	err  string
}

// readCases reads testdata/reader.txt.
func readCases(t testing.TB) []readerCase {
	t.Helper()
	f, err := os.Open("testdata/reader.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []readerCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok || k != "case" && len(cases) == 0 {
			t.Fatalf("reader.txt:%d: %q", n, line)
		}
		c := &readerCase{}
		if k != "case" {
			c = &cases[len(cases)-1]
		}
		switch k {
		case "case":
			cases = append(cases, readerCase{name: v})
		case "in":
			s, err := strconv.Unquote(v)
			if err != nil {
				t.Fatalf("reader.txt:%d: %v", n, err)
			}
			c.in = append(c.in, s...)
		case "cmd":
			args, err := unquoteAll(v)
			if err != nil {
				t.Fatalf("reader.txt:%d: %v", n, err)
			}
			c.cmds = append(c.cmds, show(args))
		case "err":
			c.err = v
		default:
			t.Fatalf("reader.txt:%d: %q", n, line)
		}
	}
	return cases
}

func unquoteAll(v string) ([][]byte, error) {
	var args [][]byte
	for v = strings.TrimSpace(v); v != ""; v = strings.TrimSpace(v) {
		q, err := strconv.QuotedPrefix(v)
		if err != nil {
			return nil, err
		}
		s, _ := strconv.Unquote(q)
		args = append(args, []byte(s))
		v = v[len(q):]
	}
	return args, nil
}

func show(args [][]byte) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Quote(string(a)))
	}
	return b.String()
}

// readAll reads every command until an error.
func readAll(rd io.Reader, lim *resp.Limits, budget resp.Budget) (cmds []string, err error) {
	r := resp.NewReader(rd, lim, budget)
	defer r.Release()
	for {
		batch, err := r.ReadCommands()
		if err != nil {
			return cmds, err
		}
		if len(batch) == 0 {
			return cmds, errors.New("ReadCommands returned no command and no error")
		}
		for _, c := range batch {
			cmds = append(cmds, show(c.Args))
		}
	}
}

// Every case gives the same commands and error whether its bytes come at
// once or one at a time.
func TestReader(t *testing.T) {
	for _, c := range readCases(t) {
		for _, how := range []string{"whole", "bytewise"} {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				var rd io.Reader = bytes.NewReader(c.in)
				if how == "bytewise" {
					rd = iotest.OneByteReader(rd)
				}
				lim := testLimits
				cmds, err := readAll(rd, &lim, nil)
				if fmt.Sprint(cmds) != fmt.Sprint(c.cmds) {
					t.Errorf("commands\n%q\nwant\n%q", cmds, c.cmds)
				}
				if c.err == "" || !strings.Contains(errText(err), c.err) {
					t.Errorf("error %v, want %q", err, c.err)
				}
				if strings.HasPrefix(c.err, "Protocol error") && !errors.Is(err, resp.ErrProtocol) {
					t.Errorf("error %v is not ErrProtocol", err)
				}
			})
		}
	}
}

// errText words err as the server answers it.
func errText(err error) string {
	var pe *resp.ProtocolError
	if errors.As(err, &pe) {
		return pe.Reply()
	}
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// budget is a Budget of limit bytes.
type budget struct{ used, limit int64 }

func (b *budget) Take(held, n int64) bool {
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

func (b *budget) Give(held, n int64) { b.used -= n }

// stepReader returns its chunks, then errStep until given more.
type stepReader struct{ chunks [][]byte }

var errStep = errors.New("no more input for now")

func (s *stepReader) Read(p []byte) (int, error) {
	if len(s.chunks) == 0 {
		return 0, errStep
	}
	n := copy(p, s.chunks[0])
	if s.chunks[0] = s.chunks[0][n:]; len(s.chunks[0]) == 0 {
		s.chunks = s.chunks[1:]
	}
	return n, nil
}

// The buffer grows only as a big command's bytes arrive (never on the
// length announced), charged to the budget, and goes back to its first
// size, and the budget to its first charge, once the command is read;
// Release gives everything back; a command the budget cannot hold is
// ErrBusy.
func TestReaderBudget(t *testing.T) {
	lim := resp.Limits{MaxBulk: 1 << 20, Buffer: 1024}
	bg := &budget{limit: 1 << 30}
	big := bytes.Repeat([]byte("u"), 100_000)
	in := &stepReader{chunks: [][]byte{fmt.Appendf(nil, "*2\r\n$4\r\nECHO\r\n$%d\r\n", len(big)), big[:10_000]}}
	r := resp.NewReader(in, &lim, bg)
	if _, err := r.ReadCommands(); err != errStep {
		t.Fatalf("a command in part: %v", err)
	}
	if bg.used != r.Held() || bg.used > 2*10_030+1024 {
		t.Fatalf("after 10 kB of a 100 kB argument the reader holds %d bytes (charged %d)", r.Held(), bg.used)
	}
	if r.Pending() != 10_000+23 {
		t.Fatalf("pending %d", r.Pending())
	}
	in.chunks = [][]byte{big[10_000:], []byte("\r\n*1\r\n$4\r\nPING\r\n")}
	cmds, err := r.ReadCommands()
	if err != nil || len(cmds) != 2 || !bytes.Equal(cmds[0].Args[1], big) || string(cmds[1].Args[0]) != "PING" {
		t.Fatalf("got %d commands, %v", len(cmds), err)
	}
	if _, err := r.ReadCommands(); err != errStep {
		t.Fatalf("next: %v", err)
	}
	if r.Held() > 2048 || r.Held() != bg.used {
		t.Fatalf("after the big command: held %d, charged %d", r.Held(), bg.used)
	}
	r.Release()
	if bg.used != 0 {
		t.Fatalf("after Release, %d bytes charged", bg.used)
	}

	small := &budget{limit: 4096}
	r = resp.NewReader(strings.NewReader(fmt.Sprintf("*2\r\n$4\r\nECHO\r\n$%d\r\n%s\r\n", len(big), big)), &lim, small)
	if _, err := r.ReadCommands(); !errors.Is(err, resp.ErrBusy) {
		t.Fatalf("a command over the budget: %v, want ErrBusy", err)
	}
	r.Release()
	if small.used != 0 {
		t.Fatalf("after Release, %d bytes charged", small.used)
	}
}

// A burst of many tiny commands grows the argument slices; they are let
// go (and their charge given back) at the next call.
func TestReaderTinyBurst(t *testing.T) {
	lim := resp.Limits{Buffer: 16 << 10}
	bg := &budget{limit: 1 << 30}
	in := &stepReader{chunks: [][]byte{bytes.Repeat([]byte("a\n"), 8000)}}
	r := resp.NewReader(in, &lim, bg)
	cmds, err := r.ReadCommands()
	if err != nil || len(cmds) != 8000 {
		t.Fatalf("%d commands, %v", len(cmds), err)
	}
	grown := r.Held()
	in.chunks = [][]byte{[]byte("PING\r\n")}
	if cmds, err := r.ReadCommands(); err != nil || len(cmds) != 1 {
		t.Fatalf("%d commands, %v", len(cmds), err)
	}
	if r.Held() > 20<<10 || r.Held() != bg.used {
		t.Fatalf("held %d after a burst of 8000 commands (%d during it), charged %d", r.Held(), grown, bg.used)
	}
}
