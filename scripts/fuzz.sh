#!/usr/bin/env bash
# Runs every fuzz target in the repository (found with grep) for FUZZTIME
# each (default 60s); `make fuzz` and `make fuzz-short` call it.
#
# FUZZJOBS targets run at once (default 1), each with its share of the
# processors as fuzzing workers (go test -parallel: the processors divided
# by FUZZJOBS, at least 1). A target's output is printed whole when it
# ends, so that the logs of targets run at once do not interleave.
#
# Go 1.26's fuzzing coordinator can end a run that found nothing with a bare
# "context deadline exceeded" at the end of -fuzztime, when a worker is
# still busy as the deadline fires (golang/go#75804, fixed in Go 1.27; seen
# here on a loaded machine). Such a run wrote no failing input: it is
# reported as a warning once the target's seed corpus has been replayed
# cleanly. Any other failure, and any failing input written, fails.
set -uo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-60s}
FUZZJOBS=${FUZZJOBS:-1}
GO=${GO:-go}
if [[ ! $FUZZJOBS =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz: FUZZJOBS=$FUZZJOBS: want a number of targets at a time, 1 or more" >&2
  exit 2
fi
workers=$(( $(nproc) / FUZZJOBS ))
(( workers >= 1 )) || workers=1
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# fuzzOne fuzzes target $2 of package directory $1, writing its output to
# $3; it fails if the target failed.
fuzzOne() {
  local dir=$1 t=$2 out=$3
  {
    echo "== $t in $dir for $FUZZTIME ($workers workers)"
    if "$GO" test -run '^$' -fuzz "^$t\$" -fuzztime "$FUZZTIME" -parallel "$workers" "./$dir" > "$out.run" 2>&1; then
      cat "$out.run"
      return 0
    fi
    cat "$out.run"
    if grep -q 'Failing input written to' "$out.run" || ! grep -qx '    context deadline exceeded' "$out.run"; then
      echo "fuzz: $t in $dir failed"
      return 1
    fi
    if ! "$GO" test -count=1 -run "^$t\$" "./$dir"; then
      echo "fuzz: $t in $dir: its seed corpus fails"
      return 1
    fi
    echo "fuzz: warning: $t in $dir ended with Go's fuzztime deadline race (golang/go#75804), no failing input; seed corpus replayed cleanly"
  } > "$out" 2>&1
}

# The targets, as "dir target" lines.
targets=()
for f in $(grep -rl --include='*_test.go' '^func Fuzz' .); do
  for t in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
    targets+=("$(dirname "$f") $t")
  done
done

# Run them FUZZJOBS at a time; after a failure, start no more, let the
# running ones end, and fail.
declare -A running=() # pid -> log file
failed=0 finished=0
reap() {
  local pid rc
  wait -n -p pid "${!running[@]}"
  rc=$?
  cat "${running[$pid]}"
  unset "running[$pid]"
  finished=$((finished + 1))
  (( rc == 0 )) || failed=1
}
i=0
for tg in "${targets[@]}"; do
  (( failed == 0 )) || break
  while (( ${#running[@]} >= FUZZJOBS )); do reap; done
  (( failed == 0 )) || break
  read -r dir t <<< "$tg"
  i=$((i + 1))
  fuzzOne "$dir" "$t" "$logs/$i" &
  running[$!]="$logs/$i"
done
while (( ${#running[@]} > 0 )); do reap; done
if (( failed )); then
  echo "fuzz: failed (see above)" >&2
  exit 1
fi
if (( finished != ${#targets[@]} )); then
  echo "fuzz: $finished of ${#targets[@]} targets ran" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, $FUZZTIME each, $FUZZJOBS at a time: nothing found"
