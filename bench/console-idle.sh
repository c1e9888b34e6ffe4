#!/usr/bin/env bash
# Idle cost of an attached console: a daemon of N hourly jobs, none due
# within the window, with `cronvisor ui` attached in a 120x40 tmux pane.
# Reports each process's CPU (utime+stime from /proc/PID/stat) over the
# window, per second, and the console's RSS at its end.
#
#   bench/console-idle.sh N WINDOW_S BIN [BIN...]   # one rep per BIN, in order
#
# CONSOLE_KEYS are typed into the console once it shows the jobs, a key a
# character: CONSOLE_KEYS=4 measures it with its timeline open.
#
# Run it with the binaries alternating (old new old new) for interleaved
# A/B figures.
set -euo pipefail
n=${1:?jobs}; window=${2:?seconds}; shift 2
keys=${CONSOLE_KEYS:-}
tck=$(getconf CLK_TCK)

cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

for bin in "$@"; do
  dir=$(mktemp -d /tmp/cv-idle.XXXXXX)
  # Every job fires at a minute half an hour away: nothing fires in the window.
  minute=$(( ($(date +%-M) + 30) % 60 ))
  {
    printf 'state_dir: %s/state\ndefaults:\n  timeout: 30s\njobs:\n' "$dir"
    for ((i = 0; i < n; i++)); do
      printf '  - name: job%05d\n    schedule: "%d * * * *"\n    command: "true"\n' "$i" "$minute"
    done
  } >"$dir/jobs.yaml"
  "$bin" --config "$dir/jobs.yaml" daemon >"$dir/daemon.log" 2>&1 &
  dpid=$!
  for _ in $(seq 100); do [ -S "$dir/state/cronvisor.sock" ] && break; sleep 0.1; done
  sock="cv-idle-$$"
  printf 'set -g status off\n' >"$dir/tmux.conf"
  tmux -L "$sock" -f "$dir/tmux.conf" new-session -d -x 120 -y 40 -c "$dir" -- "$bin" --config "$dir/jobs.yaml" ui
  upid=$(tmux -L "$sock" list-panes -F '#{pane_pid}')
  for _ in $(seq 200); do tmux -L "$sock" capture-pane -p | grep -q job00000 && break; sleep 0.1; done
  for ((k = 0; k < ${#keys}; k++)); do tmux -L "$sock" send-keys "${keys:k:1}"; done
  sleep 5 # the first snapshot's garbage collected
  d0=$(cpu "$dpid"); u0=$(cpu "$upid")
  sleep "$window"
  d1=$(cpu "$dpid"); u1=$(cpu "$upid"); r=$(rss "$upid")
  awk -v b="$bin" -v n="$n" -v w="$window" -v t="$tck" -v dd=$((d1 - d0)) -v du=$((u1 - u0)) -v r="$r" \
    -v k="$keys" 'BEGIN { printf "%s: %d jobs, %d s, keys \"%s\": daemon %.2f ms CPU/s, console %.2f ms CPU/s, console RSS %.1f MB\n", b, n, w, k, dd*1000/t/w, du*1000/t/w, r/1024 }'
  tmux -L "$sock" kill-server || true
  kill "$dpid"; wait "$dpid" || true
  rm -rf "$dir"
done
