package resp_test

import (
	"testing"

	"github.com/urldedupd/urldedupd/internal/resp"
)

func TestWriter(t *testing.T) {
	tests := []struct {
		name   string
		write  func(w *resp.Writer)
		v2, v3 string
	}{
		{"int", func(w *resp.Writer) { w.Int(-12) }, ":-12\r\n", ":-12\r\n"},
		{"simple", func(w *resp.Writer) { w.Simple("OK") }, "+OK\r\n", "+OK\r\n"},
		{"error, newlines made spaces", func(w *resp.Writer) { w.Error("ERR a\r\nb") }, "-ERR a  b\r\n", "-ERR a  b\r\n"},
		{"bulk", func(w *resp.Writer) { w.Bulk([]byte("a\r\nb")) }, "$4\r\na\r\nb\r\n", "$4\r\na\r\nb\r\n"},
		{"empty bulk", func(w *resp.Writer) { w.BulkString("") }, "$0\r\n\r\n", "$0\r\n\r\n"},
		{"null", func(w *resp.Writer) { w.Null() }, "$-1\r\n", "_\r\n"},
		{"array", func(w *resp.Writer) { w.Array(2); w.Int(1); w.Int(0) }, "*2\r\n:1\r\n:0\r\n", "*2\r\n:1\r\n:0\r\n"},
		{"map", func(w *resp.Writer) { w.Map(1); w.BulkString("k"); w.Int(3) }, "*2\r\n$1\r\nk\r\n:3\r\n", "%1\r\n$1\r\nk\r\n:3\r\n"},
		{"set", func(w *resp.Writer) { w.Set(1); w.BulkString("x") }, "*1\r\n$1\r\nx\r\n", "~1\r\n$1\r\nx\r\n"},
	}
	for _, tt := range tests {
		for proto, want := range map[int]string{2: tt.v2, 3: tt.v3} {
			var w resp.Writer
			w.SetProtocol(proto)
			tt.write(&w)
			if got := string(w.Bytes()); got != want {
				t.Errorf("%s, RESP%d: %q, want %q", tt.name, proto, got, want)
			}
			w.Reset(1 << 10)
			if w.Len() != 0 {
				t.Errorf("%s: Reset left %d bytes", tt.name, w.Len())
			}
		}
	}
}
