package daemon

import (
	"fmt"
	"net"
	"os"
)

// notify sends state ("READY=1", "STOPPING=1") to the service manager
// over the datagram socket $NOTIFY_SOCKET names, as sd_notify(3) does: a
// unit of Type=notify is started once the daemon says READY=1. Without
// $NOTIFY_SOCKET (not run by systemd, or another Type) it does nothing. A
// name starting with '@' is in the abstract namespace.
func notify(state string) error {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	addr := &net.UnixAddr{Name: path, Net: "unixgram"}
	if path[0] == '@' {
		addr.Name = "\x00" + path[1:]
	}
	c, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		return fmt.Errorf("daemon: notify %s: %w", path, err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(state)); err != nil {
		return fmt.Errorf("daemon: notify %s: %w", path, err)
	}
	return nil
}
