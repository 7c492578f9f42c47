package daemon

import (
	"errors"
	"fmt"
	"os/user"
	"strconv"
)

// ErrUnknownUser is returned by LookupUser for a name that is not a user.
var ErrUnknownUser = errors.New("no such user")

// User is the account serve switches to (--user): its name, uid and
// primary gid.
type User struct {
	Name     string
	UID, GID int
}

// LookupUser resolves a user name (or a numeric uid) to its uid and
// primary gid.
func LookupUser(name string) (*User, error) {
	u, err := user.Lookup(name)
	if _, notID := strconv.Atoi(name); err != nil && notID == nil {
		u, err = user.LookupId(name)
	}
	if err != nil {
		if errors.As(err, new(user.UnknownUserError)) || errors.As(err, new(user.UnknownUserIdError)) {
			err = ErrUnknownUser
		}
		return nil, fmt.Errorf("daemon: user %s: %w", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("daemon: user %s: %w", name, fmt.Errorf("uid %q gid %q: %w", u.Uid, u.Gid, err))
	}
	return &User{Name: u.Username, UID: uid, GID: gid}, nil
}
