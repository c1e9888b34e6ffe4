package main

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/proc"
)

// A keeper of the measured process counts in its CPU: a child named as a
// keeper (argv[0]) that spins shows in cpuWithKeepers, and measureCPU's
// difference holds its spin.
func TestCPUCountsTheKeepers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// A shell loop, renamed: the benchmark finds keepers by argv[0] and parent.
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "while :; do :; done")
	cmd.Args[0] = proc.KeeperName
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	self := os.Getpid()
	var before map[int]time.Duration
	deadline := time.Now().Add(10 * time.Second)
	for {
		cpu, err := cpuWithKeepers(self)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cpu[cmd.Process.Pid]; ok {
			before = cpu
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("keeper %d not found among %v", cmd.Process.Pid, cpu)
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now().Add(500 * time.Millisecond) // measureCPU samples half a second before
	d, err := measureCPU(self, start, start.Add(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if d < 50*time.Millisecond {
		t.Fatalf("measured %v over 300 ms beside a spinning keeper; want its spin counted", d)
	}
	if before[self] <= 0 {
		t.Fatalf("own CPU %v; want it read", before[self])
	}
}
