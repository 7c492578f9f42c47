// Package api serves the urldedupd decision over HTTP/1.1, for crawlers and
// other local processes that do not link Go code.
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
// bytes (default 64 KiB). Errors are 4xx with a one-line text message: 400
// for an empty batch, malformed JSON, a body that is not UTF-8, an over-long
// URL or a missing url parameter; 401 for a missing or wrong bearer token;
// 405 for another method; 413 for a body or batch over its limit; 415 for
// another content type. When the backend (Redis) cannot decide, the answer
// is 503 and nothing of the batch is answered.
package api
