#!/usr/bin/env bash
# Measures what a newcomer waits for: cold and warm times of `make demo`, `make test`,
# `make node-test` and `.ci/run`, each in a fresh clone of this repository's HEAD with an
# empty Go module cache, Go build cache and osm cache (cluster binaries, node kit, tools).
# The caches are private to the measurement (GOMODCACHE, GOCACHE, OSM_CACHE_DIR under a
# temporary directory), so it never touches the caches other checkouts use.
#
#   hack/measure-first-run.sh [--chain] [--keep] [--out FILE] [TARGET...]
#
# TARGET: demo (default), test, node-test, ci. For each: a cold run, then a warm run in the
# same clone with the caches the cold run filled.
#   --chain  one clone and one set of caches for all targets, in the order given: e.g.
#            `--chain demo test` measures make test after make demo (what it reuses)
#   --keep   keep the temporary directory (clones, caches, logs) and print it
#   --out    append the result rows (markdown) to FILE as well
#
# Record results in docs/benchmarks.md ("First run") with the machine (nproc, CPU) and
# its load (the rows carry `uptime`'s 1-minute load before and after each run).
# node-test and ci take /tmp/osm-node-test.lock so two measurements never overlap (flock -o:
# no process they start inherits the lock and keeps it after a kill).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
chain="" keep="" out=""
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --chain) chain=1 ;;
    --keep) keep=1 ;;
    --out) out=$2; shift ;;
    demo | test | node-test | ci) targets+=("$1") ;;
    *) echo "usage: $0 [--chain] [--keep] [--out FILE] [demo|test|node-test|ci...]" >&2; exit 2 ;;
  esac
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=(demo)

log() { echo "[measure] $*" >&2; }
load() { cut -d' ' -f1 /proc/loadavg; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/osm-first-run.XXXXXX")"
cleanup() {
  # A demo left running would keep its processes: stop it, whatever happened.
  local c
  for c in "$tmp"/*/clone; do
    if [ -d "$c/.demo" ]; then (cd "$c" && make demo-down >/dev/null 2>&1) || true; fi
  done
  if [ -n "$keep" ]; then log "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# fresh NAME: a clone of HEAD and empty caches in $tmp/NAME; sets $clone and exports the caches.
fresh() {
  local d="$tmp/$1"
  mkdir -p "$d/gomod" "$d/gocache" "$d/osm-cache"
  git clone --quiet --no-hardlinks "$REPO" "$d/clone"
  # Tests that compare with upstream read ../shared beside the checkout, as in CI.
  [ -e "$REPO/../shared" ] && ln -s "$(cd "$REPO/../shared" && pwd)" "$d/shared"
  clone="$d/clone"
  export GOMODCACHE="$d/gomod" GOCACHE="$d/gocache" OSM_CACHE_DIR="$d/osm-cache"
}

# run TARGET KIND: runs one target in $clone, prints a result row.
run() {
  local target=$1 kind=$2 cmd=() before after t0 secs rc=0
  case $target in
    demo) cmd=(make demo) ;;
    test) cmd=(make test) ;;
    node-test) cmd=(flock -o /tmp/osm-node-test.lock make node-test) ;;
    ci) cmd=(flock -o /tmp/osm-node-test.lock .ci/run) ;;
  esac
  before=$(load)
  log "$target ($kind): ${cmd[*]} in $clone, load $before; log: $clone/../$target-$kind.log"
  t0=$(date +%s)
  (cd "$clone" && "${cmd[@]}") >"$clone/../$target-$kind.log" 2>&1 || rc=$?
  secs=$(($(date +%s) - t0))
  after=$(load)
  if [ "$target" = demo ]; then (cd "$clone" && make demo-down >/dev/null 2>&1) || true; fi
  local row
  row="| \`${cmd[*]}\` | $kind | $secs s | exit $rc | load $before → $after |"
  echo "$row"
  [ -z "$out" ] || echo "$row" >>"$out"
  if [ "$rc" -ne 0 ]; then
    log "$target ($kind) failed; the end of its log:"
    tail -n 20 "$clone/../$target-$kind.log" >&2
  fi
}

log "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), go $(go env GOVERSION)"
log "uptime: $(uptime)"
echo "| what | run | time | result | load (1 min) before → after |"
echo "| --- | --- | --- | --- | --- |"
if [ -n "$chain" ]; then fresh chain; fi
for target in "${targets[@]}"; do
  [ -n "$chain" ] || fresh "$target"
  run "$target" cold
  run "$target" warm
done
log "uptime: $(uptime)"
