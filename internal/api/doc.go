// Package api serves the urldedupd decision over HTTP/1.1, for crawlers and
// other local processes that do not link Go code.
//
// Server is the handler; FrontEnd is the HTTP server around it, a
// frontend.FrontEnd the daemon runs (listeners, connection limit, drain
// and shutdown). The in-flight byte budget, the connection limit and the
// token check are package frontend's, shared with other front ends.
//
// # Endpoints
//
//	POST /v1/check[?dry_run=1]  a batch of URLs: newline-separated text
//	                            (text/plain, the default; also what curl
//	                            --data-binary sends) or a JSON array of
//	                            strings (application/json). Each URL is
//	                            tested and set (dry_run: only tested); the
//	                            answer has one verdict per URL, in order:
//	                            text "new"/"dup" lines, or JSON
//	                            {"results":["new","dup",…],"new":N,"dup":M}.
//	                            Blank lines in a text batch are skipped.
//	GET  /v1/check?url=U        one URL: "new" or "dup" (JSON with
//	                            Accept: application/json).
//	GET  /v1/stats              the figures of `urldedupd stats --json`.
//	GET  /healthz               "ok".
//
// # Limits and errors
//
// A batch holds at most Options.MaxBatch URLs (default 100,000) in at most
// Options.MaxBody bytes (default 32 MiB), each URL at most Options.MaxURL
// bytes (default 64 KiB). In a JSON batch, null and "" are refused with the
// URL's place (counted from 1); in a text batch, blank lines are skipped.
//
// Across the server, the bodies being received or decided hold at most
// Options.MaxInflightBytes (default 80 MiB): a request takes all of its
// Content-Length before reading it, or steps of a chunked body as they
// come, plus 40 bytes per URL before parsing (as many as the body can
// hold, the excess given back after). A fifth of it is kept in equal
// shares, one per connection (Options.MaxConns, default 1024: 16 KiB
// each by default): the first bytes a request holds, up to its share, are
// its own, and no other request can take them. Requests share the other
// four fifths for what they hold beyond their share (so one body is at
// most that). Stalled uploads, however many, thus fill at most those four
// fifths and their own shares, and a small request is answered at once
// (a chunked body's first step is at most the share, and what the last
// step took beyond the body is given back). A request that does not fit is
// answered 503 with "Retry-After: 1" and its connection closed; requests
// without a body (GET) need no share. A body must arrive within
// Options.BodyTimeout (default 30 s), else 408 and the connection is
// closed. Bodies over 1 MiB are held outside the Go heap and returned to
// the system when their request ends; smaller buffers are reused by at
// most 16 requests. Server.Drain, before a shutdown, answers requests still
// receiving their body 503 at once.
//
// Errors are 4xx with a one-line text message: 400 for an empty batch,
// malformed JSON, a null or empty URL in JSON, a body that is not UTF-8,
// an over-long URL or a missing url parameter; 401 for a missing or wrong
// bearer token; 405 for another method; 408 for a body too slow; 413 for a
// body or batch over its limit; 415 for another content type. When the
// backend (Redis) cannot decide, or the bytes in flight are at their cap,
// the answer is 503 and nothing of the batch is answered.
package api
