package record

import "unicode/utf8"

// The text rule. Everything in a record comes from a packet, and records
// are written as lines of text ("new<TAB>URL", one URL a line, JSON
// lines) that people read on terminals and programs split on LF, CR, tab
// and the Unicode line separators. So no record's text may hold a byte
// that starts a line, a column or a terminal escape: a C0 control (tab,
// LF, VT, FF, CR, ESC, NUL ...), DEL, a C1 control (U+0080–U+009F, NEL
// among them), U+2028 LINE SEPARATOR or U+2029 PARAGRAPH SEPARATOR, or a
// byte that is not UTF-8 (a lone 0x85 or 0x9b is NEL or CSI to an 8-bit
// terminal). Each protocol's URL builder applies it with the meaning of
// the field (a host's such bytes made '_', a path's percent-encoded), and
// Engine.record applies it to every record of every protocol, so that a
// protocol added later is held to it too.

// nextChar returns the length of the character at b[i] (1 for a byte
// that is not UTF-8) and whether the text rule forbids it.
func nextChar(b []byte, i int) (n int, forbidden bool) {
	c := b[i]
	if c < utf8.RuneSelf {
		return 1, c < 0x20 || c == 0x7f
	}
	r, n := utf8.DecodeRune(b[i:])
	switch {
	case r == utf8.RuneError && n == 1: // not UTF-8
		return 1, true
	case r <= 0x9f, r == 0x2028, r == 0x2029:
		return n, true
	}
	return n, false
}

// TextSafe reports whether b holds nothing the text rule forbids: no
// control (C0, DEL, C1), no U+2028 or U+2029, nothing that is not UTF-8.
func TextSafe(b []byte) bool {
	for i := 0; i < len(b); {
		if c := b[i]; c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		n, forbidden := nextChar(b, i)
		if forbidden {
			return false
		}
		i += n
	}
	return true
}

// AppendTextSafe appends b to dst with the bytes of every character the
// text rule forbids percent-encoded ("\r" as %0D, NEL as %C2%85, a lone
// 0x9b as %9B), as a browser sends such bytes in a URL.
func AppendTextSafe(dst, b []byte) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(b); {
		n, forbidden := nextChar(b, i)
		if !forbidden {
			dst = append(dst, b[i:i+n]...)
		} else {
			for _, c := range b[i : i+n] {
				dst = append(dst, '%', hex[c>>4], hex[c&15])
			}
		}
		i += n
	}
	return dst
}
