package dedupproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Flag says what a frame is.
type Flag uint8

// The paper's flags.
const (
	// Submit: a host's URLs, de-duplicated against its own finish_URL,
	// submitted to its network's centre.
	Submit Flag = 1
	// Request: the centre asks the hosts (or another network's centre)
	// which of the URLs they hold.
	Request Flag = 2
	// Answer: the URLs held are marked 1.
	Answer Flag = 3
)

func (f Flag) String() string {
	switch f {
	case Submit:
		return "submit"
	case Request:
		return "request"
	case Answer:
		return "answer"
	}
	return "flag(" + strconv.Itoa(int(f)) + ")"
}

// Frame is the paper's protocol frame.
type Frame struct {
	// URLs is the URL set, in order.
	URLs []string
	// Held marks the URLs an answerer holds (the paper's value 1); nil
	// or shorter than URLs: the rest are 0.
	Held []bool
	// IP is the sender's address, its identity in the protocol.
	IP netip.Addr
	// Number identifies the frame in the whole system.
	Number string
	Flag   Flag
}

// Limits cap what Decode accepts. Zero fields take the defaults below.
type Limits struct {
	MaxBytes int // a frame's bytes
	MaxURLs  int // URLs in a frame
	MaxURL   int // bytes of one URL
}

// Defaults of Limits.
const (
	DefaultMaxBytes = 8 << 20
	DefaultMaxURLs  = 10_000
	DefaultMaxURL   = 8 << 10
	maxNumber       = 64
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxURLs <= 0 {
		l.MaxURLs = DefaultMaxURLs
	}
	if l.MaxURL <= 0 {
		l.MaxURL = DefaultMaxURL
	}
	return l
}

// ErrMalformed is what every refused frame's error wraps.
var ErrMalformed = errors.New("dedupproto: malformed frame")

// malformed is an error wrapping ErrMalformed, saying what and where (the
// byte offset in the frame, when known).
func malformed(off int64, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if off >= 0 {
		return fmt.Errorf("%w: at byte %d: %s", ErrMalformed, off, msg)
	}
	return fmt.Errorf("%w: %s", ErrMalformed, msg)
}

// fields are a frame's fields, each required.
var fields = [4]string{"url_set", "ip", "number", "flag"}

// Decode reads one frame from b, within lim (nil: the defaults).
func Decode(b []byte, lim *Limits) (*Frame, error) {
	var l Limits
	if lim != nil {
		l = *lim
	}
	l = l.withDefaults()
	if len(b) > l.MaxBytes {
		return nil, malformed(-1, "%d bytes, over the limit of %d", len(b), l.MaxBytes)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := delim(d, b, '{'); err != nil {
		return nil, err
	}
	f := &Frame{}
	var seen [4]bool // url_set, ip, number, flag
	for d.More() {
		off := at(d, b)
		t, err := d.Token()
		if err != nil {
			return nil, syntax(d, err)
		}
		key, _ := t.(string)
		i := slices.Index(fields[:], key)
		if i < 0 {
			return nil, malformed(off, "unknown field %.64q", key)
		}
		if seen[i] {
			return nil, malformed(off, "field %q twice", key)
		}
		seen[i] = true
		switch key {
		case "url_set":
			err = f.decodeSet(d, b, &l)
		case "ip":
			err = f.decodeIP(d, b)
		case "number":
			err = f.decodeNumber(d, b)
		case "flag":
			err = f.decodeFlag(d, b)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := delim(d, b, '}'); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, malformed(at(d, b), "bytes after the frame")
	}
	for i, name := range fields {
		if !seen[i] {
			return nil, malformed(-1, "no %s", name)
		}
	}
	return f, nil
}

func delim(d *json.Decoder, b []byte, want json.Delim) error {
	off, t, err := next(d, b)
	if err != nil {
		return err
	}
	if t != want {
		return malformed(off, "want %q, found %v", string(want), describe(t))
	}
	return nil
}

// at is where the decoder's next token begins in b: past the separators
// and spaces before it.
func at(d *json.Decoder, b []byte) int64 {
	off := d.InputOffset()
	for off < int64(len(b)) && strings.IndexByte(" \t\r\n,:", b[off]) >= 0 {
		off++
	}
	return off
}

// next reads the next token and where it begins.
func next(d *json.Decoder, b []byte) (int64, json.Token, error) {
	off := at(d, b)
	t, err := d.Token()
	if err != nil {
		return off, nil, syntax(d, err)
	}
	return off, t, nil
}

// syntax words a JSON error as a malformed frame.
func syntax(d *json.Decoder, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return malformed(d.InputOffset(), "%v", err)
}

// describe names a JSON token for a message, briefly.
func describe(t json.Token) string {
	switch v := t.(type) {
	case string:
		return fmt.Sprintf("the string %.64q", v)
	case json.Number:
		return "the number " + v.String()
	case nil:
		return "null"
	}
	return fmt.Sprint(t)
}

// decodeSet reads url_set: an object of URL → 0 or 1, each URL once.
// The decoder reads the whole object as one value (checking its syntax
// in one pass), and its members are then read from those bytes by hand:
// a URL a few hundred nanoseconds, where one Token a key and a mark cost
// microseconds and a dozen allocations (BenchmarkFrame).
func (f *Frame) decodeSet(d *json.Decoder, b []byte, l *Limits) error {
	base := at(d, b)
	var raw json.RawMessage
	if err := d.Decode(&raw); err != nil {
		return syntax(d, err)
	}
	p := skipSpace(raw, 0)
	if p >= len(raw) || raw[p] != '{' {
		return malformed(base+int64(p), "want %q, found %v", "{", describeRaw(raw[p:]))
	}
	p = skipSpace(raw, p+1)
	index := map[string]struct{}{}
	anyHeld := false
	for p < len(raw) && raw[p] != '}' {
		if raw[p] == ',' {
			p = skipSpace(raw, p+1)
		}
		off := base + int64(p)
		u, end, err := jsonString(raw, p)
		if err != nil {
			return malformed(off, "url_set: %v", err)
		}
		switch {
		case len(f.URLs) == l.MaxURLs:
			return malformed(off, "url_set: more than %d URLs", l.MaxURLs)
		case u == "":
			return malformed(off, "url_set: an empty URL")
		case len(u) > l.MaxURL:
			return malformed(off, "url_set: a URL of %d bytes, over the limit of %d", len(u), l.MaxURL)
		}
		if _, dup := index[u]; dup {
			return malformed(off, "url_set: %.128q twice", u)
		}
		index[u] = struct{}{}
		p = skipSpace(raw, end)
		p = skipSpace(raw, p+1) // the colon: the decoder checked the syntax
		off = base + int64(p)
		var held bool
		switch {
		case p+1 < len(raw) && raw[p] == '0' && !numberByte(raw[p+1]):
		case p+1 < len(raw) && raw[p] == '1' && !numberByte(raw[p+1]):
			held, anyHeld = true, true
		default:
			return malformed(off, "url_set: %.128q is %s, want 0 or 1", u, describeRaw(raw[p:]))
		}
		p = skipSpace(raw, p+1)
		f.URLs = append(f.URLs, u)
		f.Held = append(f.Held, held)
	}
	if !anyHeld {
		f.Held = nil
	}
	return nil
}

// skipSpace returns the place of the first byte at or after p that is no
// JSON white space.
func skipSpace(b []byte, p int) int {
	for p < len(b) && (b[p] == ' ' || b[p] == '\t' || b[p] == '\r' || b[p] == '\n') {
		p++
	}
	return p
}

// numberByte reports whether c can continue a JSON number.
func numberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// jsonString reads the JSON string at b[p] (syntax already checked) and
// returns it and the place after it. A string of printable ASCII with
// no escapes is taken as it is; any other is unquoted by encoding/json,
// so that both read a string alike.
func jsonString(b []byte, p int) (string, int, error) {
	if p >= len(b) || b[p] != '"' {
		return "", p, fmt.Errorf("want a string")
	}
	for q := p + 1; q < len(b); q++ {
		switch c := b[q]; {
		case c == '"':
			return string(b[p+1 : q]), q + 1, nil
		case c == '\\' || c < 0x20 || c >= 0x80:
			return slowString(b, p)
		}
	}
	return "", p, io.ErrUnexpectedEOF
}

func slowString(b []byte, p int) (string, int, error) {
	d := json.NewDecoder(bytes.NewReader(b[p:]))
	var s string
	if err := d.Decode(&s); err != nil {
		return "", p, err
	}
	return s, p + int(d.InputOffset()), nil
}

// describeRaw names the JSON value at the start of b, as describe does.
func describeRaw(b []byte) string {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	t, err := d.Token()
	if err != nil {
		return "nothing readable"
	}
	return describe(t)
}

func (f *Frame) decodeIP(d *json.Decoder, b []byte) error {
	off, t, err := next(d, b)
	if err != nil {
		return err
	}
	s, ok := t.(string)
	if !ok {
		return malformed(off, "ip is %s, want an address as a string", describe(t))
	}
	ip, err := netip.ParseAddr(s)
	if err != nil || ip.Zone() != "" {
		return malformed(off, "ip %.64q is not an IPv4 or IPv6 address", s)
	}
	f.IP = ip
	return nil
}

func (f *Frame) decodeNumber(d *json.Decoder, b []byte) error {
	off, t, err := next(d, b)
	if err != nil {
		return err
	}
	s, ok := t.(string)
	if !ok || !validNumber(s) {
		return malformed(off, "number is %s, want 1 to %d bytes of printable ASCII", describe(t), maxNumber)
	}
	f.Number = s
	return nil
}

func validNumber(s string) bool {
	if len(s) == 0 || len(s) > maxNumber {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

func (f *Frame) decodeFlag(d *json.Decoder, b []byte) error {
	off, t, err := next(d, b)
	if err != nil {
		return err
	}
	switch n, _ := t.(json.Number); n {
	case "1", "2", "3":
		f.Flag = Flag(n[0] - '0')
		return nil
	}
	return malformed(off, "flag is %s, want 1, 2 or 3", describe(t))
}

// IsHeld reports whether the i-th URL is marked held.
func (f *Frame) IsHeld(i int) bool { return i < len(f.Held) && f.Held[i] }

// Check reports whether f can be written as a frame Decode accepts
// (within the default limits), and if not, why.
func (f *Frame) Check() error {
	switch {
	case f.Flag < Submit || f.Flag > Answer:
		return malformed(-1, "flag %d, want 1, 2 or 3", f.Flag)
	case !f.IP.IsValid() || f.IP.Zone() != "":
		return malformed(-1, "no IP address")
	case !validNumber(f.Number):
		return malformed(-1, "number %.64q, want 1 to %d bytes of printable ASCII", f.Number, maxNumber)
	case len(f.URLs) > DefaultMaxURLs:
		return malformed(-1, "%d URLs, over the limit of %d", len(f.URLs), DefaultMaxURLs)
	case len(f.Held) > len(f.URLs):
		return malformed(-1, "%d marks for %d URLs", len(f.Held), len(f.URLs))
	}
	seen := make(map[string]struct{}, len(f.URLs))
	for _, u := range f.URLs {
		if u == "" || len(u) > DefaultMaxURL {
			return malformed(-1, "a URL of %d bytes (1 to %d)", len(u), DefaultMaxURL)
		}
		if _, dup := seen[u]; dup {
			return malformed(-1, "%.128q twice", u)
		}
		seen[u] = struct{}{}
	}
	return nil
}

// Append appends f's wire form to b. It checks f first (Check).
func (f *Frame) Append(b []byte) ([]byte, error) {
	if err := f.Check(); err != nil {
		return b, err
	}
	b = append(b, `{"url_set":{`...)
	for i, u := range f.URLs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, u)
		if f.IsHeld(i) {
			b = append(b, ":1"...)
		} else {
			b = append(b, ":0"...)
		}
	}
	b = append(b, `},"ip":`...)
	b = appendString(b, f.IP.String())
	b = append(b, `,"number":`...)
	b = appendString(b, f.Number)
	b = append(b, `,"flag":`...)
	b = strconv.AppendUint(b, uint64(f.Flag), 10)
	return append(b, '}'), nil
}

// appendString appends s as a JSON string, as encoding/json writes it:
// printable ASCII other than '"', '\\' and the HTML characters it escapes
// (<, >, &) as it is, anything else through json.Marshal.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
