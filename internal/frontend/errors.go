package frontend

import "errors"

// Errors of CheckListen.
var (
	// ErrRemoteNeedsFlag is returned for a non-loopback address when
	// remote access is not allowed.
	ErrRemoteNeedsFlag = errors.New("listening on a non-loopback address needs remote access allowed")
	// ErrRemoteNeedsToken is returned for a non-loopback address without
	// a token.
	ErrRemoteNeedsToken = errors.New("listening on a non-loopback address needs a bearer token")
)
