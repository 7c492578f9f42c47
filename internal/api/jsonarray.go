package api

import (
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// splitJSON parses body, a JSON array of strings, in place: each string is
// unescaped over its own quoted form (an unescaped string is never longer),
// and a slice of body per string is appended to urls, which is returned.
// It allocates nothing beyond urls' growth and stops after max+1 strings,
// so that the caller can refuse an over-long batch without holding it.
// body must be valid UTF-8. A null or empty string is an error naming the
// URL's place, counted from 1, as is anything but an array of strings.
func splitJSON(body []byte, urls [][]byte, max int) ([][]byte, error) {
	p := skipSpace(body, 0)
	if p == len(body) || body[p] != '[' {
		return urls, syntaxError(body, p, "want [")
	}
	p = skipSpace(body, p+1)
	if p < len(body) && body[p] == ']' {
		return urls, trailing(body, p+1)
	}
	for n := 1; ; n++ {
		if p == len(body) {
			return urls, syntaxError(body, p, "want a string")
		}
		switch c := body[p]; {
		case c == '"':
		case c == 'n' && len(body)-p >= 4 && string(body[p:p+4]) == "null":
			return urls, fmt.Errorf("URL %d is null: send a string", n)
		default:
			return urls, fmt.Errorf("URL %d is not a string (byte %d)", n, p+1)
		}
		s, next, err := unquote(body, p)
		if err != nil {
			return urls, err
		}
		if len(s) == 0 {
			return urls, fmt.Errorf("URL %d is empty", n)
		}
		urls = append(urls, s)
		if len(urls) > max {
			return urls, nil
		}
		p = skipSpace(body, next)
		if p == len(body) {
			return urls, syntaxError(body, p, "want , or ]")
		}
		switch body[p] {
		case ',':
			p = skipSpace(body, p+1)
		case ']':
			return urls, trailing(body, p+1)
		default:
			return urls, syntaxError(body, p, "want , or ]")
		}
	}
}

// unquote unescapes the string whose opening quote is at body[p] into the
// bytes from body[p] on, and returns it with the index after its closing
// quote.
func unquote(body []byte, p int) (s []byte, next int, err error) {
	start := p
	r, w := p+1, p
	for r < len(body) {
		c := body[r]
		switch {
		case c == '"':
			return body[start:w], r + 1, nil
		case c < 0x20:
			return nil, 0, syntaxError(body, r, "control character in a string")
		case c != '\\':
			body[w] = c
			r, w = r+1, w+1
			continue
		}
		if r+1 == len(body) {
			break
		}
		switch e := body[r+1]; e {
		case '"', '\\', '/':
			body[w] = e
		case 'b':
			body[w] = '\b'
		case 'f':
			body[w] = '\f'
		case 'n':
			body[w] = '\n'
		case 'r':
			body[w] = '\r'
		case 't':
			body[w] = '\t'
		case 'u':
			rr := hex4(body[r+2:])
			if rr < 0 {
				return nil, 0, syntaxError(body, r, `bad \u escape`)
			}
			r += 6
			if utf16.IsSurrogate(rr) {
				if rr2 := hex4escape(body[r:]); rr2 >= 0 {
					if dec := utf16.DecodeRune(rr, rr2); dec != unicode.ReplacementChar {
						r += 6
						w += utf8.EncodeRune(body[w:], dec)
						continue
					}
				}
				rr = unicode.ReplacementChar // a lone surrogate, as encoding/json does
			}
			w += utf8.EncodeRune(body[w:], rr)
			continue
		default:
			return nil, 0, syntaxError(body, r, "bad escape")
		}
		r, w = r+2, w+1
	}
	return nil, 0, syntaxError(body, len(body), "unterminated string")
}

// hex4 decodes 4 hex digits, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// hex4escape decodes a \uXXXX escape, or returns -1.
func hex4escape(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	return hex4(b[2:])
}

func skipSpace(b []byte, p int) int {
	for p < len(b) && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r') {
		p++
	}
	return p
}

func trailing(body []byte, p int) error {
	if p = skipSpace(body, p); p < len(body) {
		return syntaxError(body, p, "data after the array")
	}
	return nil
}

func syntaxError(body []byte, p int, what string) error {
	if p >= len(body) {
		return fmt.Errorf("body is not a JSON array of strings: %s at the end (byte %d)", what, len(body))
	}
	return fmt.Errorf("body is not a JSON array of strings: %s at byte %d", what, p+1)
}
