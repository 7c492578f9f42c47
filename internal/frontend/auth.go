package frontend

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
)

// TokenMatches reports whether a client's token is the configured one,
// compared in constant time. An empty token configured matches nothing:
// the caller lets everything through when none is configured.
func TokenMatches(given, token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(given), []byte(token)) == 1
}

// CheckListen checks a TCP address a front end is to listen on: host:port
// with a port number or a service name (no network is asked), and, for
// an address that is not loopback, remote access allowed and a token set
// (a front end serves without TLS: a token is what keeps strangers out).
func CheckListen(addr string, allowRemote bool, token string) error {
	host, port, err := net.SplitHostPort(addr)
	if err == nil {
		// A number, or a service named in /etc/services: no network asked.
		_, err = net.DefaultResolver.LookupPort(context.Background(), "tcp", port)
	}
	if err != nil {
		return fmt.Errorf("daemon: listen %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	switch {
	case !allowRemote:
		return fmt.Errorf("daemon: listen %s: %w", addr, ErrRemoteNeedsFlag)
	case token == "":
		return fmt.Errorf("daemon: listen %s: %w", addr, ErrRemoteNeedsToken)
	}
	return nil
}
