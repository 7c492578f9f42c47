// Package literature reproduces the experiments of the papers urldedupd
// came from (../shared/seeds: the patent, the DSBF and MDBF papers) on
// this build's filters, so that their claims are measured here and not
// read off the papers: each experiment returns its measured curves, with
// the formulas beside them, as compare.Results that compare.Plot draws.
// The tests run them small, with assertions; scripts/litbench runs them at
// the papers' sizes for docs/BENCHMARKS.md and draws docs/img/*.svg.
package literature
