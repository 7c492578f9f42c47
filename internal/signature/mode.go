package signature

import "fmt"

// Mode is the normalization applied before signing. It is part of the
// on-disk format: it changes every signature.
type Mode uint8

const (
	// Safe applies the normalizations of RFC 3986 §6.2.2–6.2.3 that never
	// change which resource a URL names: lower-case scheme and host,
	// upper-case percent-escape hex, decode escapes of unreserved
	// characters, percent-encode bytes that may not appear raw, remove dot
	// segments, drop the default port and the fragment, empty path → "/",
	// IDN host → punycode. A URL without a scheme is taken as http://. It is
	// the default.
	Safe Mode = iota
	// None signs the bytes exactly as given.
	None
)

// String returns the name used in the state metadata and on the command
// line: "safe" or "none".
func (m Mode) String() string {
	switch m {
	case Safe:
		return "safe"
	case None:
		return "none"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode parses a name returned by [Mode.String].
func ParseMode(name string) (Mode, error) {
	switch name {
	case "safe":
		return Safe, nil
	case "none":
		return None, nil
	}
	return 0, fmt.Errorf("%w: %q (want safe or none)", ErrUnknownMode, name)
}
