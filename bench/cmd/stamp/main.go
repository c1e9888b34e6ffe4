// Command stamp is the job the start-lateness benchmark runs: it reads the
// clock as its first act and appends one line to the file named by its
// first argument:
//
//	SLOT_UNIX_NANOS NOW_UNIX_NANOS JOB
//
// SLOT is $CRONVISOR_SCHEDULED_AT, or "-" when it is unset (a scheduler
// that does not set it, such as supercronic: the reader infers the slot).
// JOB is the optional second argument (`stamp FILE [JOB]`), else
// $CRONVISOR_JOB, so that one command line names its job under any
// scheduler. Lateness is NOW - SLOT: the child's own clock reading after
// exec and the Go runtime's start, which is what a job sees. The bare
// baseline (bench/cmd/cvbench) runs this same program, so the runtime's
// start-up is in both figures alike.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	now := time.Now() // first, before anything else costs time
	if len(os.Args) != 2 && len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: stamp FILE [JOB]")
		os.Exit(2)
	}
	slot := "-"
	if s := os.Getenv("CRONVISOR_SCHEDULED_AT"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "stamp: CRONVISOR_SCHEDULED_AT:", err)
			os.Exit(2)
		}
		slot = strconv.FormatInt(t.UnixNano(), 10)
	}
	job := os.Getenv("CRONVISOR_JOB")
	if len(os.Args) == 3 {
		job = os.Args[2]
	}
	// One write(2) of one short line with O_APPEND: concurrent stamps
	// never interleave within a line.
	line := slot + " " + strconv.FormatInt(now.UnixNano(), 10) + " " + job + "\n"
	f, err := os.OpenFile(os.Args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stamp:", err)
		os.Exit(1)
	}
	if _, err := f.WriteString(line); err != nil {
		fmt.Fprintln(os.Stderr, "stamp:", err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stamp:", err)
		os.Exit(1)
	}
}
