package daemon

import (
	"errors"
	"testing"
)

func TestLookupUser(t *testing.T) {
	for _, name := range []string{"root", "0"} {
		u, err := LookupUser(name)
		if err != nil || u.Name != "root" || u.UID != 0 || u.GID != 0 {
			t.Errorf("LookupUser(%q) = %+v, %v", name, u, err)
		}
	}
	for _, name := range []string{"no-such-user-x", "4294967", ""} {
		if _, err := LookupUser(name); !errors.Is(err, ErrUnknownUser) {
			t.Errorf("LookupUser(%q): %v, want ErrUnknownUser", name, err)
		}
	}
}
