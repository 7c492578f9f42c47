package resp

import "strconv"

// Writer builds replies in a buffer, in RESP2 or RESP3. The zero Writer
// writes RESP2. It is not safe for concurrent use.
type Writer struct {
	buf   []byte
	proto int
}

// SetProtocol chooses RESP2 (2) or RESP3 (3) for the replies after.
func (w *Writer) SetProtocol(p int) { w.proto = p }

// Protocol is 2 or 3.
func (w *Writer) Protocol() int {
	if w.proto == 3 {
		return 3
	}
	return 2
}

// Bytes returns the replies written since the last Reset. They alias the
// Writer's buffer.
func (w *Writer) Bytes() []byte { return w.buf }

// Len is how many bytes the replies take.
func (w *Writer) Len() int { return len(w.buf) }

// Reset empties the buffer, dropping it when it has grown over keep
// bytes.
func (w *Writer) Reset(keep int) {
	if cap(w.buf) > keep {
		w.buf = nil
	}
	w.buf = w.buf[:0]
}

func (w *Writer) line(prefix byte, n int64) {
	w.buf = append(w.buf, prefix)
	w.buf = strconv.AppendInt(w.buf, n, 10)
	w.buf = append(w.buf, '\r', '\n')
}

// Int writes an integer (":n").
func (w *Writer) Int(n int64) { w.line(':', n) }

// Simple writes a simple string ("+s"). s must hold no CR or LF.
func (w *Writer) Simple(s string) {
	w.buf = append(w.buf, '+')
	w.buf = appendLine(w.buf, s)
}

// Error writes an error ("-s"): s starts with its code ("ERR", "NOAUTH");
// a CR or LF in it becomes a space.
func (w *Writer) Error(s string) {
	w.buf = append(w.buf, '-')
	w.buf = appendLine(w.buf, s)
}

// Bulk writes a bulk string ("$n" and its bytes).
func (w *Writer) Bulk(b []byte) {
	w.line('$', int64(len(b)))
	w.buf = append(w.buf, b...)
	w.buf = append(w.buf, '\r', '\n')
}

// BulkString writes s as a bulk string.
func (w *Writer) BulkString(s string) {
	w.line('$', int64(len(s)))
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// Null writes null: "$-1" in RESP2 (a null bulk string), "_" in RESP3.
func (w *Writer) Null() {
	if w.Protocol() == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "$-1\r\n"...)
}

// Array writes the header of an array of n elements, which follow.
func (w *Writer) Array(n int) { w.line('*', int64(n)) }

// Map writes the header of a map of n pairs, which follow, key then
// value: "%n" in RESP3, an array of 2n elements in RESP2.
func (w *Writer) Map(n int) {
	if w.Protocol() == 3 {
		w.line('%', int64(n))
		return
	}
	w.line('*', int64(2*n))
}

// Set writes the header of a set of n elements: "~n" in RESP3, an array
// in RESP2.
func (w *Writer) Set(n int) {
	if w.Protocol() == 3 {
		w.line('~', int64(n))
		return
	}
	w.line('*', int64(n))
}

// appendLine appends s and CRLF, with CR and LF in s made spaces.
func appendLine(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, '\r', '\n')
}
