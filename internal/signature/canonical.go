package signature

// isCanonical reports whether url is an http or https URL that Safe
// normalization would leave exactly as it is, so that it can be hashed in
// place. It may answer false for some canonical URLs; those take the slow
// path and come out the same.
func isCanonical(url []byte) bool {
	var rest []byte
	switch {
	case len(url) > 8 && string(url[:8]) == "https://":
		rest = url[8:]
	case len(url) > 7 && string(url[:7]) == "http://":
		rest = url[7:]
	default:
		return false
	}
	i := 0
	for i < len(rest) && class[rest[i]]&clHostPlain != 0 {
		i++
	}
	if i == 0 || i == len(rest) || rest[i] != '/' {
		return false // empty host, empty path, port, userinfo or odd host
	}
	dots := false
	for j := i; j < len(rest); j++ {
		c := rest[j]
		if class[c]&clPathStop == 0 {
			continue
		}
		switch c {
		case '%':
			if j+2 >= len(rest) {
				return false
			}
			h, l := rest[j+1], rest[j+2]
			if !isUpperHex(h) || !isUpperHex(l) || class[unhex(h)<<4|unhex(l)]&clUnreserved != 0 {
				return false
			}
		case '.':
			dots = dots || rest[j-1] == '/'
		default: // '#' or a byte that must be encoded
			return false
		}
	}
	return !dots || !hasDotSegment(rest[i:])
}

func isUpperHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }
