package signature

import "errors"

var (
	// ErrUnknownAlgorithm is returned by ParseAlgorithm for a name it does
	// not know.
	ErrUnknownAlgorithm = errors.New("unknown signature algorithm")
	// ErrUnknownMode is returned by ParseMode for a name it does not know.
	ErrUnknownMode = errors.New("unknown normalization mode")
	// ErrInvalidURL is returned by Normalize for input it cannot parse as a
	// URL. Such input is still signed, as raw bytes, by Signer.Sign.
	ErrInvalidURL = errors.New("invalid URL")
)
