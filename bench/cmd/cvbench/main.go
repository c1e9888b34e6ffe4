// Command cvbench measures a real cronvisor daemon from outside: start
// lateness of jobs firing every second (against a bare Go scheduler that
// starts the same program from the same kind of timer), and idle cost
// with thousands of hourly jobs; compare puts cronvisor beside supercronic
// and a bare floor (see the bench package's documentation). bench/run.sh
// builds it and runs every scenario; BENCHMARKS.md explains the figures.
//
//	cvbench lateness -cronvisor BIN -stamp BIN -jobs 100 -duration 60s -reps 3
//	cvbench attached -cronvisor BIN -stamp BIN -jobs 20 -duration 60s -reps 3
//	cvbench alerts -cronvisor BIN -stamp BIN -jobs 100 -duration 60s -reps 3
//	cvbench idle -cronvisor BIN -jobs 10000 -duration 60s -reps 3
//	cvbench compare -supercronic BIN -cronvisor BIN -stamp BIN -duration 60s -reps 3 [1|100|1000|burst|idle|rss ...]
//	cvbench budget -cronvisor BIN -reps 10
//	cvbench status -cronvisor BIN -jobs 1000000 -calls 10 -all
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: cvbench lateness|attached|alerts|idle|compare|budget|status [flags]  (-h for the flags)")
		return 2
	}
	fs, o := flags(args[0], stderr)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	for _, bin := range []*string{&o.cronvisor, &o.stamp, &o.supercronic, &o.floor, &o.cronvisorStripped} {
		// Absolute: the daemon runs in its own directory, and so do its jobs.
		if p, err := exec.LookPath(*bin); *bin != "" && err == nil {
			*bin, _ = filepath.Abs(p)
		}
	}
	cleanup, err := o.workDir()
	if err != nil {
		fmt.Fprintln(stderr, "cvbench:", err)
		return 1
	}
	defer cleanup()
	switch args[0] {
	case "lateness":
		err = lateness(*o, stdout)
	case "idle":
		err = idle(*o, stdout)
	case "attached":
		err = attached(*o, stdout)
	case "alerts":
		err = alerts(*o, stdout)
	case "compare":
		err = compare(*o, fs.Args(), stdout)
	case "budget":
		err = budget(*o, stdout)
	case "status":
		err = status(*o, stdout)
	default:
		fmt.Fprintf(stderr, "cvbench: unknown scenario %q: want lateness, attached, alerts, idle, compare, budget or status\n", args[0])
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "cvbench:", err)
		return 1
	}
	return 0
}

// flags is scenario's flag set, parsing into the options it returns.
func flags(scenario string, stderr io.Writer) (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet("cvbench "+scenario, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.StringVar(&o.cronvisor, "cronvisor", "cronvisor", "cronvisor binary")
	fs.StringVar(&o.stamp, "stamp", "stamp", "stamp binary (bench/stamp/stamp.c or bench/cmd/stamp), for lateness")
	fs.IntVar(&o.jobs, "jobs", 1, "number of jobs")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "measurement window of each run")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "fires discarded after start-up")
	fs.IntVar(&o.reps, "reps", 1, "repetitions; medians are reported")
	fs.IntVar(&o.rowsPerJob, "history-rows", 3, "idle: history rows per job written before the start")
	fs.StringVar(&o.supercronic, "supercronic", "", "compare: supercronic binary")
	fs.StringVar(&o.floor, "floor", "", "compare idle: bench/cmd/floor binary, the idle floor (none: n/a)")
	fs.IntVar(&o.fires, "fires", 120, "compare: fires of the 1 job/s part (its window, whatever -duration says)")
	fs.IntVar(&o.idleJobs, "idle-jobs", 10000, "compare: hourly jobs of the idle part")
	fs.IntVar(&o.burstJobs, "burst-jobs", 1000, "compare burst: jobs on * * * * *, all due at each minute")
	fs.IntVar(&o.burstMinutes, "burst-minutes", 3, "compare burst: minute boundaries (bursts) in the window")
	fs.StringVar(&o.cronvisorStripped, "cronvisor-stripped", "", "compare: cronvisor built with -ldflags '-s -w' (its size is printed)")
	fs.StringVar(&o.dir, "dir", "", "work directory (default: a new temporary one, removed at the end)")
	fs.StringVar(&o.durability, "durability", "", "the daemon's durability: machine or process (default: the key left out, machine)")
	fs.IntVar(&o.calls, "calls", 10, "status: calls of `status JOB`")
	fs.BoolVar(&o.statusAll, "all", false, "status: one `status --json` of every job after the calls")
	fs.StringVar(&o.consoleKeys, "console-keys", "", "attached: keys typed into the console once it shows the jobs, e.g. 4 for the timeline")
	return fs, o
}

// workDir makes o.dir, or a temporary one that cleanup removes.
func (o *options) workDir() (cleanup func(), err error) {
	if o.dir != "" {
		return func() {}, os.MkdirAll(o.dir, 0o755)
	}
	d, err := os.MkdirTemp("", "cvbench-")
	if err != nil {
		return nil, err
	}
	o.dir = d
	return func() { os.RemoveAll(d) }, nil
}

// options are the command-line settings shared by the scenarios.
type options struct {
	cronvisor, stamp string
	jobs             int
	duration, warmup time.Duration
	reps             int
	rowsPerJob       int
	dir              string
	// alerts, when set, is added to the daemon's jobs.yaml defaults (see
	// writeJobs): a notify target and metrics on (alerts, compare).
	alerts string
	// durability, when set, is the daemon's jobs.yaml durability key.
	durability string
	// viaShell runs every job through /bin/sh -c with its name as the last
	// argument (shellLine), on every side (compare: supercronic has no
	// other way).
	viaShell bool
	// supercronic and floor (bench/cmd/floor) are binaries, fires the 1
	// job/s window in fires, and idleJobs the idle part's job count
	// (compare).
	supercronic, floor string
	fires, idleJobs    int
	// period is the jobs' slot period (0: a second); burstJobs and
	// burstMinutes size compare's burst part (minute jobs).
	period                  time.Duration
	burstJobs, burstMinutes int
	// cronvisorStripped is the same cronvisor built with -ldflags "-s -w"
	// (compare: its size is printed; "": not built).
	cronvisorStripped string
	// calls is status's calls of `status JOB`; statusAll adds one
	// `status --json` of every job.
	calls     int
	statusAll bool
	// consoleKeys are typed into the attached console once it shows the
	// jobs ("4": the timeline), each rune a key (attached).
	consoleKeys string
}
