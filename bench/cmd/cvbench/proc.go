package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// usage is what /proc says about one process's own consumption (its
// children's is not included).
type usage struct {
	// cpu sums the first field of /proc/PID/task/*/schedstat: nanoseconds
	// on a CPU, of the threads alive now (a Go process keeps its threads).
	cpu time.Duration
	// ticks is utime+stime of /proc/PID/stat: 10 ms resolution, exited
	// threads included; a cross-check of cpu.
	ticks time.Duration
	// wakeups sums the third schedstat field (timeslices run): how often
	// the process's threads were put on a CPU.
	wakeups int64
	threads int
	// rss and hwm are VmRSS and VmHWM (peak) in KiB.
	rss, hwm int64
}

// userHZ is the unit of utime and stime in /proc/PID/stat.
const userHZ = 100

func readUsage(pid int) (usage, error) {
	var u usage
	base := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(base, "stat"))
	if err != nil {
		return u, err
	}
	// Fields after the command, which is in parentheses and may hold spaces:
	// f[0] is field 3 (state), so utime (14) and stime (15) are f[11], f[12].
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return u, fmt.Errorf("%s/stat: short", base)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	u.ticks = time.Duration(ut+st) * time.Second / userHZ
	tasks, err := os.ReadDir(filepath.Join(base, "task"))
	if err != nil {
		return u, err
	}
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(base, "task", t.Name(), "schedstat"))
		if err != nil {
			continue // the thread just exited
		}
		var run, wait, slices int64
		if _, err := fmt.Sscan(string(b), &run, &wait, &slices); err == nil {
			u.cpu += time.Duration(run)
			u.wakeups += slices
			u.threads++
		}
	}
	u.rss, u.hwm, err = memory(filepath.Join(base, "status"))
	return u, err
}

// memory reads VmRSS and VmHWM (KiB) from a /proc/PID/status file.
func memory(path string) (rss, hwm int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm, sc.Err()
}
