#!/usr/bin/env bash
# The false-duplicate rate of a state at a given load, measured: insert N
# distinct URLs with `filter`, then ask about Q other distinct URLs with
# `filter --dry-run` and count how many it calls duplicates. Every one of
# them is a false duplicate (the query URLs were never inserted), so the
# rate is dup/Q; it is printed with its 95% Wilson score interval next to
# what the layout's formula predicts. The insert phase's own duplicates are
# false too (its URLs are distinct) and are printed as well.
#
# Usage: scripts/bench-capacity.sh            # bitmap, N = 10M and 100M, Q = 100M
#   NS="10000000 100000000"  loads to measure, one fresh state each
#   QUERIES=100000000        query URLs per load (ids N .. N+Q-1, none inserted)
#   LAYOUT=bitmap            passed as `init --layout` when init has that flag
#                            (required for any layout but bitmap)
#   SIZE=BYTES               passed as `init --size` (e.g. 8589934592)
#   INIT_ARGS="..."          any other init arguments (e.g. --capacity N)
#   WORK=/var/tmp            where the state goes (SIZE bytes, 512 MiB by default)
#
# URLs are made by scripts/genurls -dup 0 (ids 0..N-1 inserted, N..N+Q-1
# queried: distinct ids make distinct URLs) and streamed through pipes;
# nothing but the state is written to disk.
# Output: a markdown table on stdout, ready for docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ns=${NS:-10000000 100000000}
queries=${QUERIES:-100000000}
layout=${LAYOUT:-bitmap}

work=$(mktemp -d "${WORK:-/var/tmp}/urldedupd-capacity.XXXXXX")
trap 'rm -rf "$work"' EXIT
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/genurls" ./scripts/genurls

init=(init)
if "$work/urldedupd" init --help | grep -q -- '--layout'; then
  init+=(--layout "$layout")
elif [ "$layout" != bitmap ]; then
  echo "bench-capacity: this urldedupd has no init --layout; only LAYOUT=bitmap works" >&2
  exit 2
fi
[ -n "${SIZE:-}" ] && init+=(--size "$SIZE")
# shellcheck disable=SC2206 # INIT_ARGS is split on purpose
[ -n "${INIT_ARGS:-}" ] && init+=($INIT_ARGS)

# summary FILE: "lines new dup" from filter -v's summary line on stderr.
summary() {
  sed -n 's/^lines \([0-9]*\)  new \([0-9]*\)  dup \([0-9]*\) .*/\1 \2 \3/p' "$1" | tail -1
}

# stat FIELD: a field of `stats --json`, or "-" when the layout has none.
stat() {
  "$work/urldedupd" --dir "$work/state" stats --json |
    python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print("-" if v is None else v)' "$1"
}

echo "Layout $layout; init: urldedupd ${init[*]}; queries $queries other distinct URLs per load;"
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/{print $2}') GiB; $(date -u '+%F %H:%M UTC')"
echo
echo "| layout | N inserted | insert: false dups (expected) | insert s | query dups / Q | false-dup rate [95% CI] | theory n/2³² | from measured fill (stats) | query s |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in $ns; do
  rm -rf "$work/state"
  "$work/urldedupd" --dir "$work/state" "${init[@]}" > /dev/null
  t0=$(date +%s.%N)
  "$work/genurls" -n "$n" -dup 0 | "$work/urldedupd" --dir "$work/state" filter -v > /dev/null 2> "$work/ins"
  t1=$(date +%s.%N)
  read -r ilines _ idup <<< "$(summary "$work/ins")"
  [ "$ilines" = "$n" ] || { echo "insert: $ilines lines of $n" >&2; cat "$work/ins" >&2; exit 1; }
  chance=$(stat false_duplicate_chance)
  t2=$(date +%s.%N)
  "$work/genurls" -n "$queries" -dup 0 -start "$n" | "$work/urldedupd" --dir "$work/state" filter --dry-run -v > /dev/null 2> "$work/q"
  t3=$(date +%s.%N)
  read -r qlines _ qdup <<< "$(summary "$work/q")"
  [ "$qlines" = "$queries" ] || { echo "query: $qlines lines of $queries" >&2; cat "$work/q" >&2; exit 1; }
  python3 - "$layout" "$n" "$idup" "$qdup" "$queries" "$chance" "$t0" "$t1" "$t2" "$t3" <<'PY'
import math, sys
layout, n, idup, qdup, q, chance = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
t0, t1, t2, t3 = map(float, sys.argv[7:11])
# Wilson score interval, 95%.
z = 1.959963984540054
p = qdup / q
den = 1 + z * z / q
mid = (p + z * z / (2 * q)) / den
half = z * math.sqrt(p * (1 - p) / q + z * z / (4 * q * q)) / den
lo, hi = max(0.0, mid - half), min(1.0, mid + half)
# Bitmap: n distinct URLs leave 2^32(1 - e^(-n/2^32)) bits set in
# expectation, so the insert phase loses n minus that many.
M = 2.0 ** 32
expected_lost = n - M * (-math.expm1(-n / M))
fmt = lambda x: "%.4g" % x
chance = "-" if chance == "-" else fmt(float(chance))
print(f"| {layout} | {n:,} | {idup:,} ({expected_lost:,.0f} for bitmap) | {t1 - t0:.0f} | {qdup:,} / {q:,} "
      f"| {fmt(p)} [{fmt(lo)}, {fmt(hi)}] | {fmt(n / M)} | {chance} | {t3 - t2:.0f} |")
PY
done
echo
echo "Theory n/2³² is the bitmap layout's; the next column is \`stats\`' own figure"
echo "(the bitmap's: bits set / 2³²) on the state the queries ran against."
