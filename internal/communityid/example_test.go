package communityid_test

import (
	"fmt"
	"net/netip"

	"github.com/urldedupd/urldedupd/internal/communityid"
)

func ExampleAppend() {
	client := netip.MustParseAddrPort("128.232.110.120:34855")
	server := netip.MustParseAddrPort("66.35.250.204:80")
	fmt.Println(string(communityid.Append(nil, 0, communityid.TCP, client, server)))
	fmt.Println(string(communityid.Append(nil, 0, communityid.TCP, server, client)))
	// Output:
	// 1:LQU9qZlK+B5F3KDmev6m5PMibrg=
	// 1:LQU9qZlK+B5F3KDmev6m5PMibrg=
}
