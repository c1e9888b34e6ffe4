// Package monitorslack widens the timer slack of the Go runtime's
// monitor thread (sysmon), so that its polls while the process is busy
// come in fewer wake-ups.
//
// sysmon sleeps 20 µs between polls for as long as any processor of the
// Go scheduler is busy or in a system call, then goes back to its deep
// sleep; the kernel rounds each of those sleeps up by the thread's timer
// slack (50 µs by default). A supervisor's fire keeps a processor busy
// for a millisecond or two, so sysmon alone wakes up more often per fire
// than all the other threads together, and on machines where a context
// switch is dear (a paravirtualised guest) those wake-ups are a large
// part of a fire's cost. Its duties need no such precision: taking back
// a processor from a thread blocked in a system call for other
// goroutines (after two polls: up to a millisecond later with this
// slack), preempting a goroutine that ran for 10 ms, polling the network
// when no one else did for 10 ms. The slack is set on sysmon's thread alone:
// the threads that wait for the process's timers keep theirs, so no
// timer of the process fires later for it.
package monitorslack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Slack is the monitor's timer slack: its polls while the process is
// busy come at most this much later than the runtime asked for.
const Slack = 500 * time.Microsecond

// ErrNotFound is returned when the monitor's thread cannot be told
// apart: the process has no thread but its main one.
var ErrNotFound = errors.New("monitorslack: no thread besides the main one")

// Set gives the runtime's monitor thread a timer slack of slack. The
// monitor is the runtime's first thread after the main one: runtime.main
// starts it before any initialiser or goroutine runs, so it has the
// lowest thread id after the process's own. Writing another thread's
// slack takes CAP_SYS_NICE (root has it); without it Set returns the
// error and nothing changes. Call it once, early in main.
func Set(slack time.Duration) error {
	tid, err := monitorThread("/proc/self/task", os.Getpid())
	if err != nil {
		return err
	}
	// /proc/TID (not /proc/self/task/TID) has the file for a thread.
	path := filepath.Join("/proc", strconv.Itoa(tid), "timerslack_ns")
	if err := os.WriteFile(path, []byte(strconv.FormatInt(slack.Nanoseconds(), 10)), 0); err != nil {
		return fmt.Errorf("monitorslack: %w", err)
	}
	return nil
}

// monitorThread is the id of the first thread made after the main one
// (pid) among the entries of taskDir: the smallest id above pid, or,
// after the ids wrapped around, the smallest one.
func monitorThread(taskDir string, pid int) (int, error) {
	entries, err := os.ReadDir(taskDir)
	if err != nil {
		return 0, fmt.Errorf("monitorslack: %w", err)
	}
	var tids []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil && tid != pid {
			tids = append(tids, tid)
		}
	}
	if len(tids) == 0 {
		return 0, ErrNotFound
	}
	slices.Sort(tids)
	if i, _ := slices.BinarySearch(tids, pid); i < len(tids) {
		return tids[i], nil
	}
	return tids[0], nil
}
