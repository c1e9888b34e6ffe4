#!/usr/bin/env bash
# Runs every test of cronvisor on a fresh machine: installs what the tests
# need when it is missing, then `go test -race ./...`.
set -euo pipefail
cd "$(dirname "$0")"

need=()
command -v flock >/dev/null || need+=(util-linux)
command -v setsid >/dev/null || need+=(util-linux)
command -v redis-server >/dev/null || need+=(redis-server)
# SQL lock backends: the tests start mariadbd and postgres themselves (internal/harness/sqltest)
command -v mariadb-install-db >/dev/null && command -v mysql >/dev/null || need+=(mariadb-server)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null && command -v psql >/dev/null || need+=(postgresql)
command -v tmux >/dev/null || need+=(tmux)
[ -f /usr/share/zoneinfo/UTC ] || need+=(tzdata) # schedule tests use the host's zone database too
command -v useradd >/dev/null || need+=(passwd)  # strict-mode and run-as tests create a user
command -v mount >/dev/null || need+=(mount)     # storage-fault tests mount a small tmpfs
[ -f /usr/share/bash-completion/bash_completion ] || need+=(bash-completion) # the completion test runs bash's script
command -v git >/dev/null || need+=(git)         # the --version test builds a clone
command -v systemd-analyze >/dev/null || need+=(systemd) # the unit file test runs systemd-analyze verify
command -v unshare >/dev/null || need+=(util-linux)      # the PID 1 test runs the daemon in a new pid namespace
command -v strace >/dev/null || need+=(strace)          # the durability test counts the sync calls of a daemon
command -v ip >/dev/null || need+=(iproute2)            # the fleet's partition tests put hosts in network namespaces
command -v iptables >/dev/null || need+=(iptables)      # ... and cut their links with DROP rules
command -v nsenter >/dev/null || need+=(util-linux)     # ... and start daemons inside them
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "test.sh: missing ${need[*]}; install them (as root: apt-get install -y ${need[*]})" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# -parallel 4: most e2e tests wait on real processes and servers, not the CPU.
go test -race -count=1 -timeout 25m -parallel 4 ./...
