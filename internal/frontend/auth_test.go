package frontend_test

import (
	"errors"
	"testing"

	"github.com/urldedupd/urldedupd/internal/frontend"
)

func TestCheckListen(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		token  string
		want   error
		fails  bool
	}{
		{"127.0.0.1:8080", false, "", nil, false},
		{"[::1]:http", false, "", nil, false},
		{"localhost:8080", false, "", nil, false},
		{"0.0.0.0:8080", false, "t", frontend.ErrRemoteNeedsFlag, true},
		{"0.0.0.0:8080", true, "", frontend.ErrRemoteNeedsToken, true},
		{"0.0.0.0:8080", true, "t", nil, false},
		{"8080", false, "", nil, true},
		{"127.0.0.1:no-such-service", false, "", nil, true},
	}
	for _, tt := range tests {
		err := frontend.CheckListen(tt.addr, tt.remote, tt.token)
		if (err != nil) != tt.fails || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("CheckListen(%q, %v, %q) = %v", tt.addr, tt.remote, tt.token, err)
		}
	}
}

func TestTokenMatches(t *testing.T) {
	for _, tt := range []struct {
		given, token string
		want         bool
	}{{"s3cret", "s3cret", true}, {"s3cre", "s3cret", false}, {"", "", false}, {"x", "", false}} {
		if got := frontend.TokenMatches(tt.given, tt.token); got != tt.want {
			t.Errorf("TokenMatches(%q, %q) = %v", tt.given, tt.token, got)
		}
	}
}
