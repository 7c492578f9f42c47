#!/usr/bin/env bash
# A DSBF in Redis, this build against another commit's, alternating on the
# same machine in one run (ratios: the machine is noisy): scripts/dsbfbench
# sends LINES URLs (scripts/genurls, 30% repeats) in batches of 300 with
# WORKERS in flight to a fresh single redis-server (no persistence) holding
# a fresh 512 MiB DSBF (c = 3, fmax 0.01), ROUNDS times each.
#
# Usage: scripts/bench-dsbf-ab.sh BASE_COMMIT   # ROUNDS=3 LINES=1000000 WORKERS=16
# Output: a markdown table of URLs/s on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: $0 BASE_COMMIT}
rounds=${ROUNDS:-3}
lines=${LINES:-1000000}
workers=${WORKERS:-16}
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
  { apt-get update -qq && apt-get install -y -qq redis-server redis-tools >/dev/null; }

work=$(mktemp -d /var/tmp/urldedupd-dsbf-ab.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  git worktree remove --force "$work/base" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
git worktree add -q --detach "$work/base" "$base"
(cd "$work/base" && go build -o "$work/dsbfbench-base" ./scripts/dsbfbench && go build -o "$work/urldedupd-base" ./cmd/urldedupd)
go build -o "$work/dsbfbench-this" ./scripts/dsbfbench
go build -o "$work/urldedupd-this" ./cmd/urldedupd
go run ./scripts/genurls -n "$lines" > "$work/urls.txt"

rate() { # rate VERSION: URLs/s on a fresh server and state
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$work/r"
  redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --dir "$work/r" > "$work/r/log" 2>&1 &
  pid=$!
  for _ in $(seq 200); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
  "$work/urldedupd-$1" --backend "redis://127.0.0.1:$port/0" init --layout dsbf --size 512MiB --children 3 --fmax 0.01 > /dev/null
  "$work/dsbfbench-$1" -state "redis://127.0.0.1:$port/0" -urls "$work/urls.txt" -batch 300 -workers "$workers" |
    sed -n 's/.* \([0-9]*\) URLs\/s.*/\1/p' | head -1
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

echo "DSBF in one Redis: $lines URLs, batches of 300, $workers in flight; base $(git rev-parse --short "$base"), this $(git rev-parse --short HEAD)"
echo
echo "| round | base URLs/s | this URLs/s | this / base |"
echo "|---|---|---|---|"
for r in $(seq "$rounds"); do
  b=$(rate base); t=$(rate this)
  printf '| %d | %s | %s | %.2f |\n' "$r" "$b" "$t" "$(python3 -c "print($t/$b)")"
done
