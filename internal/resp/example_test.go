package resp_test

import (
	"fmt"
	"strings"

	"github.com/urldedupd/urldedupd/internal/resp"
)

// A pipelined burst is read at once; the replies are written in order,
// here in RESP3 after HELLO 3.
func Example() {
	in := strings.NewReader("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*3\r\n$6\r\nBF.ADD\r\n$4\r\nurls\r\n$9\r\nhttp://a/\r\nPING\r\n")
	r := resp.NewReader(in, nil, nil)
	cmds, err := r.ReadCommands()
	if err != nil {
		panic(err)
	}
	var w resp.Writer
	for _, c := range cmds {
		fmt.Printf("%q\n", c.Args)
		switch string(c.Args[0]) {
		case "HELLO":
			w.SetProtocol(3)
			w.Map(1)
			w.BulkString("proto")
			w.Int(3)
		case "BF.ADD":
			w.Int(1)
		default:
			w.Null()
		}
	}
	fmt.Printf("%q\n", w.Bytes())
	// Output:
	// ["HELLO" "3"]
	// ["BF.ADD" "urls" "http://a/"]
	// ["PING"]
	// "%1\r\n$5\r\nproto\r\n:3\r\n:1\r\n_\r\n"
}
