#!/usr/bin/env bash
# Times `urldedupd filter` against its peers on one deterministic URL file,
# all in the same run: mawk '!seen[$0]++', LC_ALL=C sort -u, a Python set
# filter, and the floor (read lines + CRC32 only). Then the patent's own
# experiment, two passes over 75,012 URLs (scripts/bench-patent.sh).
#
# Usage: scripts/bench-filter.sh [LINES]   (default 10000000)
# With BASE=/path/to/an/older/urldedupd, the filter rows are also run with
# that binary, alternating with this build's, for a before/after in one run.
# NO_DROP_CACHES=1 skips the cold-cache row (drop_caches is system-wide).
# Output: a markdown table on stdout, ready for docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-10000000}

need=()
command -v mawk >/dev/null || need+=(mawk)
[ -x /usr/bin/time ] || need+=(time)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi

work=$(mktemp -d /var/tmp/urldedupd-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/genurls" ./scripts/genurls
go build -o "$work/crcfloor" ./scripts/crcfloor
"$work/genurls" -n "$lines" > "$work/urls.txt"
cat > "$work/setfilter.py" <<'PY'
import sys
seen = set()
out = sys.stdout
for line in sys.stdin:
    if line not in seen:
        seen.add(line)
        out.write(line)
PY
cat "$work/urls.txt" > /dev/null # into the page cache
distinct=$(LC_ALL=C sort -u "$work/urls.txt" | wc -l)

# measure NAME CMD...: prints a table row; stdout of CMD goes to $work/out.
measure() {
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/out" 2>/dev/null
  read -r secs kb < "$work/time"
  printf '| %s | %s | %d | %d |\n' "$name" "$secs" $((kb / 1024)) "$(wc -l < "$work/out")"
}

echo "Input: $lines lines, $(du -m "$work/urls.txt" | cut -f1) MB, $distinct distinct; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%F)"
echo
echo "| command | seconds | peak RSS (MiB) | lines out |"
echo "|---|---|---|---|"
measure "floor: read + CRC32 (scripts/crcfloor)" sh -c "'$work/crcfloor' < '$work/urls.txt'"
for mode in safe none; do
  for bin in ${BASE:+"$BASE"} "$work/urldedupd"; do
    tag=""; [ "$bin" = "${BASE:-}" ] && tag=", BASE"
    rm -rf "$work/state"; "$bin" --dir "$work/state" init --normalize $mode > /dev/null
    measure "urldedupd filter (normalize $mode, new state$tag)" "$bin" --dir "$work/state" filter "$work/urls.txt"
    measure "urldedupd filter (normalize $mode, second run: all dup$tag)" "$bin" --dir "$work/state" filter "$work/urls.txt"
  done
done
measure "mawk '!seen[\$0]++'" mawk '!seen[$0]++' "$work/urls.txt"
measure "LC_ALL=C sort -u" env LC_ALL=C sort -u "$work/urls.txt"
measure "python3 set filter" sh -c "python3 '$work/setfilter.py' < '$work/urls.txt'"

echo
echo "Patent experiment: 75,012 URLs, two passes (scripts/bench-patent.sh)"
echo
bash scripts/bench-patent.sh
