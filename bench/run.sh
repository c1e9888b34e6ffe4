#!/usr/bin/env bash
# Runs the measurements of BENCHMARKS.md. Run it by hand on an otherwise
# quiet machine; CI only smoke-tests the Go benchmarks (-benchtime 1x).
#
#   bench/run.sh                  # everything: machine, go, lateness 1/100/1000, idle 1000/10000 (~30 min)
#   bench/run.sh machine          # what the figures were measured on
#   bench/run.sh go               # the in-process Go benchmarks
#   bench/run.sh lateness N       # N jobs every second: cronvisor vs a bare Go scheduler
#   bench/run.sh attached N       # N jobs every second: daemon alone vs with `cronvisor ui` attached (needs tmux);
#                                 # CONSOLE_KEYS=4: the console shows its timeline (the keys typed into it)
#   bench/run.sh console-idle N   # N hourly jobs none of which fires: the attached console's CPU a second and RSS
#                                 # (bench/console-idle.sh; CONSOLE_KEYS=4: with the timeline open)
#   bench/run.sh alerts N         # N jobs every second: plain daemon vs metrics and a webhook target
#   bench/run.sh idle N           # N hourly jobs: start-up and idle cost of the daemon
#   bench/run.sh status N         # N daily jobs: 10 calls of `status JOB`, then one `status --json`,
#                                 # with the daemon's RSS around them (N 1000000: about 5 minutes)
#   bench/run.sh compare [PART..] # cronvisor beside supercronic and a bare floor, interleaved per rep
#                                 # (PART: 1, 100, 1000 jobs every second, burst: 1,000 jobs on
#                                 # `* * * * *`, idle: 10,000 hourly, rss: a 3-job daemon's memory; default all)
#   bench/run.sh budget           # the memory budget: each dependency's bytes, resident pages, init time
#   bench/run.sh fleet [N,N..]    # N hosts (default 3,10,20) on one PostgreSQL, 50 jobs every 10 s each:
#                                 # connections, records and server CPU per slot (needs root; FLEET_WINDOW, default 5m)
#
# Environment: DURATION (window of each run, default 60s), REPS (runs of
# each scenario, medians reported; default 3), BENCHTIME and COUNT (go
# test -benchtime/-count; default 2s and 5), CRONVISOR (a prebuilt binary
# to measure instead of building this checkout), STAMP (raw, libc or go:
# the job whose clock reading is each start; see build below),
# DURABILITY (machine or process: the daemon's jobs.yaml durability key;
# unset, the key is left out and the default, machine, holds).
# compare: SUPERCRONIC (required: its binary, built outside this repo:
# git clone https://github.com/aptible/supercronic ../supercronic &&
# (cd ../supercronic && go build -o supercronic .)), FIRES (the 1 job/s
# part's window in fires, default 120, whatever DURATION says; lower it
# for a smoke run), IDLE_JOBS (default 10000), BURST_JOBS (default 1000)
# and BURST_MINUTES (the burst's window in minute boundaries, default 3;
# each side waits for a boundary: about 3 minutes a side per rep at 3).
# Every job runs through /bin/sh -c on every side; cronvisor with its
# default durability (or DURABILITY's), metrics on and one webhook
# target; bench/doc.go says what is fair and how. A
# smoke run of about 3 minutes, then BENCHMARKS.md's table (about 20):
#   SUPERCRONIC=../supercronic/supercronic DURATION=10s REPS=1 FIRES=20 bench/run.sh compare
#   SUPERCRONIC=../supercronic/supercronic DURATION=20s REPS=2 bench/run.sh compare
set -euo pipefail
# SUPERCRONIC as given from the caller's directory.
if [ -n "${SUPERCRONIC:-}" ]; then SUPERCRONIC=$(realpath -e "$SUPERCRONIC"); fi
cd "$(dirname "$0")/.."

DURATION=${DURATION:-60s}
REPS=${REPS:-3}
BENCHTIME=${BENCHTIME:-2s}
COUNT=${COUNT:-5}
DURABILITY=${DURABILITY:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

build() {
  if [ -n "${CRONVISOR:-}" ]; then
    cp "$CRONVISOR" "$out/cronvisor"
  else
    go build -o "$out/cronvisor" .
  fi
  # The job whose clock reading is each start (see bench/stamp/): raw (the
  # default on x86-64: no C library, reads the clock a few microseconds
  # after exec), libc (the default elsewhere: static glibc, ~0.3 ms of
  # start-up on this VM), or go (the Go runtime's ~1 ms start-up too).
  local stamp=${STAMP:-}
  if [ -z "$stamp" ]; then
    stamp=libc
    [ "$(uname -m)" = x86_64 ] && stamp=raw
  fi
  case "$stamp" in
    raw|libc)
      if ! command -v cc >/dev/null; then
        echo "bench/run.sh: STAMP=$stamp needs a C compiler (apt-get install -y gcc), or set STAMP=go" >&2
        exit 1
      fi ;;
  esac
  case "$stamp" in
    raw) cc -O2 -static -nostdlib -ffreestanding -fno-builtin -fno-stack-protector \
           -o "$out/stamp" bench/stamp/stamp_x86_64.c ;;
    libc) cc -O2 -static -o "$out/stamp" bench/stamp/stamp.c ;;
    go) (cd bench && go build -o "$out/stamp" ./cmd/stamp) ;;
    *) echo "bench/run.sh: STAMP is raw, libc or go" >&2; exit 2 ;;
  esac
  echo "stamp: $stamp"
  # The stripped size compare prints: this checkout built without its
  # symbol table and DWARF (with CRONVISOR set, that binary's strip(1)).
  if [ -z "${CRONVISOR:-}" ]; then go build -ldflags='-s -w' -o "$out/cronvisor-stripped" .; fi
  (cd bench && go build -o "$out/cvbench" ./cmd/cvbench)
  (cd bench && go build -o "$out/floor" ./cmd/floor)
}

machine() {
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "kernel: $(uname -r)"
  echo "go: $(go version)"
  echo "processes on the machine: $(ls /proc | grep -c '^[0-9]')"
}

gobench() {
  go test -run '^$' -bench . -benchtime "$BENCHTIME" -count "$COUNT" ./internal/store/history/ ./runner/ ./internal/daemon/service/ ./ui/
  # The harness's own benchmarks: bench is a module of its own.
  (cd bench && go test -run '^$' -bench . -benchtime "$BENCHTIME" -count "$COUNT" .)
}

lateness() {
  "$out/cvbench" lateness -cronvisor "$out/cronvisor" -stamp "$out/stamp" \
    -jobs "$1" -duration "$DURATION" -reps "$REPS" -durability "$DURABILITY"
}

attached() {
  "$out/cvbench" attached -cronvisor "$out/cronvisor" -stamp "$out/stamp" \
    -jobs "$1" -duration "$DURATION" -reps "$REPS" -durability "$DURABILITY" -console-keys "${CONSOLE_KEYS:-}"
}

alerts() {
  "$out/cvbench" alerts -cronvisor "$out/cronvisor" -stamp "$out/stamp" \
    -jobs "$1" -duration "$DURATION" -reps "$REPS" -durability "$DURABILITY"
}

compare() {
  if [ -z "${SUPERCRONIC:-}" ]; then
    echo "bench/run.sh compare: set SUPERCRONIC to a supercronic binary; build one beside the project:" >&2
    echo "  git clone https://github.com/aptible/supercronic ../supercronic && (cd ../supercronic && go build -o supercronic .)" >&2
    exit 2
  fi
  local stripped=""
  if [ -z "${CRONVISOR:-}" ]; then stripped="$out/cronvisor-stripped"; fi
  "$out/cvbench" compare -supercronic "$SUPERCRONIC" -cronvisor "$out/cronvisor" -stamp "$out/stamp" -floor "$out/floor" \
    -duration "$DURATION" -reps "$REPS" -fires "${FIRES:-120}" -idle-jobs "${IDLE_JOBS:-10000}" \
    -durability "$DURABILITY" -burst-jobs "${BURST_JOBS:-1000}" -burst-minutes "${BURST_MINUTES:-3}" \
    -cronvisor-stripped "$stripped" "$@"
}

budget() {
  # The unstripped binary: go tool nm needs its symbols.
  "$out/cvbench" budget -cronvisor "$out/cronvisor" -reps "${BUDGET_REPS:-10}"
}

idle() {
  "$out/cvbench" idle -cronvisor "$out/cronvisor" -jobs "$1" -duration "$DURATION" -reps "$REPS" \
    -durability "$DURABILITY"
}

status() {
  "$out/cvbench" status -cronvisor "$out/cronvisor" -jobs "$1" -calls "${CALLS:-10}" -reps "$REPS" -all
}

case "${1:-all}" in
  machine) machine ;;
  go) gobench ;;
  lateness) build; lateness "${2:?jobs}" ;;
  idle) build; idle "${2:?jobs}" ;;
  status) build; status "${2:?jobs}" ;;
  attached) build; attached "${2:?jobs}" ;;
  console-idle) build; for _ in $(seq "$REPS"); do bench/console-idle.sh "${2:?jobs}" "${DURATION%s}" "$out/cronvisor"; done ;;
  alerts) build; alerts "${2:?jobs}" ;;
  budget) machine; build; budget ;;
  fleet) machine; build; (cd bench && go build -o "$out/fleetbench" ./cmd/fleetbench)
    "$out/fleetbench" -cronvisor "$out/cronvisor" -hosts "${2:-3,10,20}" -duration "${FLEET_WINDOW:-5m}" ;;
  compare) shift; [ -n "${SUPERCRONIC:-}" ] || compare; machine; build; compare "$@" ;;
  all)
    machine; echo
    gobench; echo
    build
    for n in 1 100 1000; do lateness "$n"; echo; done
    for n in 1000 10000; do idle "$n"; echo; done
    ;;
  *) sed -n '2,38p' "$0" >&2; exit 2 ;;
esac
