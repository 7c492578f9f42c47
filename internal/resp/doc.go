// Package resp reads Redis-protocol (RESP) commands and writes RESP2 and
// RESP3 replies, for a server that must not trust its clients.
//
// # Reading
//
// A [Reader] reads RESP2 multibulk commands ("*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n"),
// as every Redis client sends them, and inline commands ("PING hi\r\n":
// arguments separated by spaces or tabs, no quoting), as a person typing
// into a socket does. [Reader.ReadCommands] returns every complete
// command in its buffer at once (a pipelined burst), reading from the
// connection only when there is none, so a server can decide a burst as
// one batch and answer it in order.
//
// The commands' arguments are slices of the Reader's buffer, and the
// commands themselves slices it keeps: nothing is allocated per command
// once the buffer and the slices have grown to a connection's usual
// bursts. They are valid until the next call.
//
// # Limits
//
// A hostile client can cost a connection at most [Limits]: the arguments
// of a command (MaxArgs), the bytes of one argument (MaxBulk, checked on
// the length announced, before any of it is read), the line of an inline
// command (MaxInline), and the bytes of one command (MaxCommand). The
// buffer starts at Limits.Buffer bytes and grows, by doubling, only while
// a command that does not fit is arriving, and only as its bytes arrive
// (a client that announces a big argument and sends it slowly makes the
// server hold only what it sent); it goes back to Limits.Buffer once the
// command is answered. Every byte the buffer and the argument slices hold
// can be charged to a [Budget] shared by all connections: a command that
// the budget cannot take fails with [ErrBusy].
//
// Input that breaks the protocol or a limit fails with a *[ProtocolError]
// (errors.Is(err, [ErrProtocol])), worded as Redis words it; the commands
// before it in the same burst are returned first. Redis answers
// "-ERR Protocol error: ..." and closes the connection: so should the
// server, since what follows cannot be framed.
//
// # Writing
//
// A [Writer] appends replies to a buffer that the server writes once a
// burst is answered: integers, simple strings, errors, bulk strings,
// arrays, maps and null, in RESP2 or RESP3 (HELLO 3) as the connection
// chose. A map is an array of 2n elements in RESP2; null is "$-1" in
// RESP2 and "_" in RESP3.
package resp
