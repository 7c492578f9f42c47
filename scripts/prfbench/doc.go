// Package prfbench measures keyed PRFs that could place URLs in the keyed
// layout, on one 55-byte URL: SipHash-2-4 (github.com/dchest/siphash, what
// internal/keyed uses), SipHash-1-3 (github.com/dgryski/go-sip13) and
// HighwayHash-64 (github.com/minio/highwayhash). It is a module of its own
// so that these candidates never become dependencies of urldedupd:
//
//	cd scripts/prfbench && go test -run . -bench . -benchmem
//
// The results and the recommendation are in docs/BENCHMARKS.md.
package prfbench
