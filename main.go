// Command cronvisor is a job supervisor that replaces cron: it schedules the
// jobs of jobs.yaml itself and guards every run with a lock and a deadline.

// The runtime would re-read the CPU affinity and cgroup quota every second
// to follow GOMAXPROCS changes (Go 1.25+): an idle daemon must not poll,
// and GOMAXPROCS set at start-up is what cron-like work needs.
//
//go:debug updatemaxprocs=0
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	_ "time/tzdata" // zone names work on machines without a zone database

	"cronvisor/internal/base/monitorslack"
	"cronvisor/internal/cli"
	"cronvisor/internal/lock/backends"
	"cronvisor/internal/proc"
)

func main() {
	if proc.IsSetup(os.Args) { // a run's exec shim: applies its limits, then execs the job
		os.Exit(proc.SetupMain(os.Args[1:]))
	}
	// Fewer wake-ups of the runtime's monitor at every fire, in the
	// daemon and its keeper. Without CAP_SYS_NICE it stays as it was,
	// which costs only those wake-ups: nothing to warn of.
	_ = monitorslack.Set(monitorslack.Slack)
	if proc.IsKeeper(os.Args) { // a run's keeper: this binary re-executed
		os.Exit(proc.KeeperMain(os.Args[1:], keepLease))
	}
	// Before anything is started: a job gets fds 0-3 and no descriptor
	// the shell or service manager that started cronvisor left open. A
	// keeper (above) starts nothing and holds exactly what its supervisor
	// gave it; the exec shim (above) must pass fd 3, the lock, to the job.
	if err := proc.CloseInheritedOnExec(); err != nil {
		fmt.Fprintln(os.Stderr, "cronvisor: warning:", err)
	}
	stop := profile(os.Getenv("CRONVISOR_CPUPROFILE"))
	code := cli.Execute(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// profile writes a CPU profile of the whole command to path, for
// CONTRIBUTING's "Profiling"; "" profiles nothing.
func profile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cronvisor: warning: CRONVISOR_CPUPROFILE:", err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// keepLease lets a keeper renew the lease of a dead supervisor's run, in
// the backend that wrote its hand-off.
func keepLease(handoff []byte) (proc.KeptLease, error) { return backends.KeepLease(handoff) }
