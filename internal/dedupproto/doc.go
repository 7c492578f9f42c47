// Package dedupproto is the URL de-duplication protocol of Chen and Zhou
// for distributed crawlers on Redis (../shared/seeds/003, issue 23), as
// the paper writes it, to be measured against urldedupd's own design.
//
// The paper's unit is the frame: a set of URLs as JSON (each URL a key,
// 0 its value), the sender's IP address, a number unique in the whole
// system, and a flag: 1 a set submitted by a host to its network's
// centre, 2 a de-duplication request the centre broadcasts, 3 a host's
// (or another network's) answer, where a URL the answerer holds is
// marked 1. This package reads and writes frames (Decode, Frame.Append)
// with the caps a hostile sender meets, and runs the protocol's nodes on
// real Redis servers: a Host (URL_pool, task_pool, its finish_URL a
// urldedupd state), a Centre (task_URL, local_reduce_pool,
// dist_reduce_pool), and Tasks, a host's task pool as its crawlers claim
// and acknowledge it. Every node reads one Topology.
//
// # Delivery
//
// A frame is pushed onto its receiver's inbox, a list in the receiver's
// Redis; the receiver moves it to a work list and drops it only once
// handled, so a frame outlives a receiver that stops. No command is sent
// twice by the client; a node that stopped in the middle of a frame
// handles it again, and every receiver ignores a frame it has seen. A
// centre keeps all it knows in its Redis. The choices made where the
// paper is silent are in docs/literature.md.
//
// # Wire format
//
// The paper names the fields, not their encoding; a frame here is one
// JSON object:
//
//	{"url_set":{"http://a/":0,"http://b/":1},"ip":"10.0.0.2","number":"n1.h2.17","flag":3}
//
// url_set keeps its order on the wire (a URL's place is its place in the
// frame); a URL appears once; a mark is 0 or 1; ip is an IPv4 or IPv6
// address; number is 1 to 64 bytes of printable ASCII; flag is 1, 2 or
// 3. Anything else, a field missing or unknown, or a frame over its caps
// (Limits) is refused with an error wrapping ErrMalformed that says what
// and where.
package dedupproto
