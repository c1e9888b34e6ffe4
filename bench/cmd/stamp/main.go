// Command stamp is the job the start-lateness benchmark runs: it reads the
// clock as its first act and appends one line to the file named by its
// first argument:
//
//	SLOT_UNIX_NANOS NOW_UNIX_NANOS JOB
//
// SLOT is $CRONVISOR_SCHEDULED_AT. Lateness is NOW - SLOT: the child's own
// clock reading after exec and the Go runtime's start, which is what a job
// sees. The bare baseline (bench/cmd/cvbench) runs this same program, so
// the runtime's start-up is in both figures alike.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	now := time.Now() // first, before anything else costs time
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: stamp FILE (with CRONVISOR_SCHEDULED_AT set)")
		os.Exit(2)
	}
	slot, err := time.Parse(time.RFC3339Nano, os.Getenv("CRONVISOR_SCHEDULED_AT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "stamp: CRONVISOR_SCHEDULED_AT:", err)
		os.Exit(2)
	}
	// One write(2) of one short line with O_APPEND: concurrent stamps
	// never interleave within a line.
	line := strconv.FormatInt(slot.UnixNano(), 10) + " " + strconv.FormatInt(now.UnixNano(), 10) +
		" " + os.Getenv("CRONVISOR_JOB") + "\n"
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
