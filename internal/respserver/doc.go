// Package respserver serves urldedupd's decision over the Redis protocol
// (RESP), so that a crawler in any language can use a Redis client
// (redis-py, go-redis, redis-cli) with RedisBloom's commands and replies.
// FrontEnd is a frontend.FrontEnd that `urldedupd serve` runs with
// --resp-listen ADDR (TCP) and --resp-socket PATH (Unix); package resp
// reads the commands and writes the replies.
//
// # Commands
//
//	BF.ADD key item          :1 new (now added), :0 seen before
//	BF.MADD key item…        an array of those, in order
//	BF.EXISTS key item       :1 seen, :0 not; nothing is added (a dry run)
//	BF.MEXISTS key item…     an array of those
//	BF.INFO key [field]      Capacity (planned by init --capacity; 0: none),
//	                         Size (the state's bytes), Number of filters (1),
//	                         Number of items inserted (the state's estimate
//	                         of the distinct items it holds, every key
//	                         counted; -1: a full bitmap, no estimate),
//	                         Expansion rate (0: a state never grows); a
//	                         map in RESP3; one field (CAPACITY, SIZE,
//	                         FILTERS, ITEMS, EXPANSION) as an array of one
//	BF.CARD key              Number of items inserted (0 for no estimate)
//	BF.FORGET key item…      an array of :1 forgotten (it was held; it is new
//	                         at its next BF.ADD), :0 absent; the keyed layouts
//	                         only (an error naming the reason on the others)
//	PING [msg], ECHO msg, SELECT 0, QUIT
//	HELLO [2|3] [AUTH user token] [SETNAME name]
//	AUTH [user] token        the user name is not looked at
//	CLIENT SETNAME|GETNAME|ID|SETINFO|INFO
//	COMMAND [COUNT|DOCS|INFO name…|LIST]   enough for redis-cli
//
// Anything else is "-ERR unknown command 'X'". The keys share one state:
// BF.INFO and BF.CARD give the figures of the whole state, whatever the
// key. HELLO reports server "urldedupd", version 7.0.0 (the Redis
// version whose replies the commands follow).
//
// # Keys and signatures
//
// A key names a namespace: the same item under two keys is two items.
// Items under Options.DefaultKey ("urls" unless serve's
// --resp-default-key says otherwise) are signed exactly as `filter`, the
// capture sensor and the HTTP API sign a URL: normalized (the state's
// mode), then hashed, so that crawlers using that key share the
// sensor's state. Under any other key, the signed bytes are the key, a
// NUL byte (Separator) and the normalized item. Normalization
// percent-encodes every byte up to 0x20, and the server refuses keys and
// items holding a NUL byte, so no namespaced item is signed like another
// key's or like a URL of the default key.
//
// An item need not be a URL. Normalization reads an item without a
// scheme as http://item: a Scrapy request fingerprint (40 hexadecimal
// digits) is signed as http://<fingerprint>/, its letters lower-cased
// (hexadecimal is the same number either way). An item normalization
// cannot parse ("two words", "/a/path") is signed as its bytes, as
// filter does. Refused, with an error for that command and the
// connection kept: an empty or blank item, an item over Options.MaxItem
// bytes (64 KiB) or holding a NUL byte, a key holding a NUL byte, more
// than Options.MaxItems items in one command.
//
// # Batches and order
//
// A connection reads every complete command its buffer holds (a
// pipelined burst), signs the items of its BF commands, and decides them
// through the state as one batch for each run of consecutive adds or of
// consecutive dry runs (in chunks of 1024, as the HTTP API), so that a
// BF.EXISTS after a BF.ADD of the same item in the same burst sees it.
// Replies go out in the order of the commands, in one write. A state that
// cannot decide (Redis down) fails the BF commands of that run with
// "-ERR state: ...".
//
// # Connections
//
// On Linux the connections are served by event loops (one for every two
// processors), as redis-server serves its clients: epoll, nonblocking
// reads and writes, one read each time a connection is readable, every
// complete command read answered, the replies written at once. A reply
// the client does not take waits, and its connection is not read until
// it has gone out; the others are served meanwhile. A goroutine for each
// connection (Options.Goroutines, and elsewhere than Linux) answered
// 13–17% fewer single commands a second when the state is not flushed
// (the loop answered 14–21% more);
// with serve's 1 s flush neither is faster for single commands, and
// goroutines decide big batches about 20% faster (docs/BENCHMARKS.md).
//
// # Limits, authentication, shutdown
//
// The HTTP API's: connections at once (a frontend.ConnLimit), bytes in
// flight (a frontend.Budget: a connection's buffer starts at 16 KiB, its
// own share, and grows only for a command bigger than that, as its bytes
// arrive), a command's time to arrive once begun and a reply's time to be
// written (CommandTimeout), an idle connection's (IdleTimeout). An
// argument over twice MaxItem, more than MaxItems+2 arguments, a command
// over MaxCommand bytes or malformed input is answered
// "-ERR Protocol error: ..." and the connection closed, as Redis does; a
// command the budget cannot hold now, "-ERR busy: ...". With a token set,
// every command but AUTH, HELLO and QUIT is refused (NOAUTH) until AUTH
// or HELLO AUTH gives it. Drain (SIGTERM) answers the commands already
// read, refuses a command still arriving, and closes each connection.
//
// Every command is reported to Options.Observe with its name (upper case;
// "unknown" for others) and "ok" or its error's first word.
package respserver
