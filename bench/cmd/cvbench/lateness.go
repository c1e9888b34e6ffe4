package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// latencyRun is one measured run, of cronvisor or of the bare scheduler.
type latencyRun struct {
	label    string
	expected int             // fires the window should hold: jobs x slots
	period   time.Duration   // between slots: a second, or a minute (compare burst)
	starts   []time.Duration // each start's lateness: child's clock minus slot
	last     []time.Duration // per slot, the lateness of its last start
	cpu      time.Duration   // the scheduler's own CPU over the window
	skipped  int             // cronvisor's "run skipped" records in the window
	failed   int             // its "run finished" records in the window with another outcome than ok
	reasons  map[string]int  // why they were skipped or failed
	stamps   string          // the stamp file
	log      string          // the daemon's log; "" for the bare floor
	// history reads cronvisor's records once it stopped; nil for the
	// others. Its log says less: it rate-limits repeated skips.
	history func() ([]historyRecord, error)
	window  [2]time.Time  // the measured slots: [start, end)
	stopped time.Duration // from SIGTERM to the daemon's exit
}

func (r latencyRun) cpuPerFire() time.Duration {
	if len(r.starts) == 0 {
		return 0
	}
	return r.cpu / time.Duration(len(r.starts))
}

// lateness alternates a bare run and a cronvisor run, reps times, so that
// both see the same machine, and prints each run and the medians.
func lateness(o options, w io.Writer) error {
	var bare, cv []latencyRun
	for rep := range o.reps {
		b, err := runBare(o, rep)
		if err != nil {
			return err
		}
		c, err := runCronvisor(o, rep, nil)
		if err != nil {
			return err
		}
		bare, cv = append(bare, b), append(cv, c)
	}
	fmt.Fprintf(w, "lateness: %d job(s) every second, window %v after %v warm-up, %d rep(s); times in ms\n",
		o.jobs, o.duration, o.warmup, o.reps)
	printPairs(w, bare, cv)
	reasons := map[string]int{}
	for _, r := range cv {
		for k, n := range r.reasons {
			reasons[k] += n
		}
	}
	for k, n := range reasons {
		fmt.Fprintf(w, "  cronvisor skipped or failed %d fire(s) of the windows: %s\n", n, k)
	}
	if spawn, start, err := calibrate(o); err == nil {
		fmt.Fprintf(w, "stamp alone, p50 of 50 bare starts: %.2f ms from exec.Cmd.Start to its return, %.2f ms to its clock reading in main\n",
			ms(spawn), ms(start))
	}
	printComparison(w, bare, cv, "bare", "cv", "cronvisor/bare", "cpu/fire")
	return nil
}

// printPairs prints the table's header and each rep's two runs.
func printPairs(w io.Writer, base, other []latencyRun) {
	fmt.Fprintf(w, "%-14s %13s %8s %8s %8s %10s %10s %9s %7s\n",
		"run", "starts/expect", "p50", "p99", "max", "last p50", "last p99", "cpu/fire", "skip/fail")
	for i := range base {
		printRun(w, base[i])
		printRun(w, other[i])
	}
}

// printComparison prints the medians of both sides and their ratios.
func printComparison(w io.Writer, base, other []latencyRun, baseName, otherName, ratioName, cpuName string) {
	mb, mo := medians(base), medians(other)
	printMedians(w, "median "+baseName, mb)
	printMedians(w, "median "+otherName, mo)
	fmt.Fprintf(w, "ratio %s: start p50 %.2f, p99 %.2f; last-of-second p50 %.2f; %s %.2f\n",
		ratioName, mo[0]/mb[0], mo[1]/mb[1], mo[3]/mb[3], cpuName, mo[5]/mb[5])
}

func printRun(w io.Writer, r latencyRun) {
	fmt.Fprintf(w, "%-14s %6d/%-6d %8.2f %8.2f %8.2f %10.2f %10.2f %9.3f %4d/%d\n", r.label,
		len(r.starts), r.expected, ms(quantile(r.starts, .5)), ms(quantile(r.starts, .99)),
		ms(quantile(r.starts, 1)), ms(quantile(r.last, .5)), ms(quantile(r.last, .99)),
		ms(r.cpuPerFire()), r.skipped, r.failed)
}

// medians returns, over runs, the medians of p50, p99, max, last p50,
// last p99 and CPU per fire, in ms.
func medians(runs []latencyRun) [6]float64 {
	var cols [6][]float64
	for _, r := range runs {
		v := [6]time.Duration{quantile(r.starts, .5), quantile(r.starts, .99), quantile(r.starts, 1),
			quantile(r.last, .5), quantile(r.last, .99), r.cpuPerFire()}
		for i := range v {
			cols[i] = append(cols[i], ms(v[i]))
		}
	}
	var out [6]float64
	for i := range cols {
		out[i] = median(cols[i])
	}
	return out
}

func printMedians(w io.Writer, label string, m [6]float64) {
	fmt.Fprintf(w, "%-14s %13s %8.2f %8.2f %8.2f %10.2f %10.2f %9.3f\n", label, "", m[0], m[1], m[2], m[3], m[4], m[5])
}

// window is the measured span: from the first slot (of o.slotPeriod())
// after the warm-up, for duration in whole seconds.
func window(ready time.Time, o options) (start, end time.Time) {
	p := o.slotPeriod()
	start = ready.Add(o.warmup).Truncate(p).Add(p)
	return start, start.Add(o.duration.Truncate(time.Second))
}

// slotPeriod is the time between the jobs' slots: o.period, or a second.
func (o options) slotPeriod() time.Duration {
	if o.period > 0 {
		return o.period
	}
	return time.Second
}

// cronvisorSchedule is the jobs' schedule for o.slotPeriod(): every
// second, or every minute (five fields).
func (o options) cronvisorSchedule() string {
	if o.slotPeriod() == time.Minute {
		return "* * * * *"
	}
	return "* * * * * *"
}

// measureCPU samples the CPU of pid and of its keeper processes half a
// second before the window's first and after its last slot, so that
// exactly the window's fires fall in between. A keeper does a share of
// every run's work (it is handed each run and lets go of it), so it
// counts; one started inside the window counts from its start.
func measureCPU(pid int, start, end time.Time) (time.Duration, error) {
	time.Sleep(time.Until(start.Add(-500 * time.Millisecond)))
	u0, err := cpuWithKeepers(pid)
	if err != nil {
		return 0, err
	}
	time.Sleep(time.Until(end.Add(-500 * time.Millisecond)))
	u1, err := cpuWithKeepers(pid)
	var d time.Duration
	for p, c := range u1 {
		d += c - u0[p]
	}
	return d, err
}

// cpuWithKeepers reads the CPU of pid and of each of its keepers, by pid.
func cpuWithKeepers(pid int) (map[int]time.Duration, error) {
	u, err := readUsage(pid)
	if err != nil {
		return nil, err
	}
	cpu := map[int]time.Duration{pid: u.cpu}
	keepers, err := keepersOf(pid)
	for _, k := range keepers {
		if ku, kerr := readUsage(k); kerr == nil { // else it just exited
			cpu[k] = ku.cpu
		}
	}
	return cpu, err
}

// runCronvisor measures a real daemon whose jobs all run `stamp FILE`
// every second. attach, when not nil, starts a client of the ready daemon
// (the console) and returns what ends it.
func runCronvisor(o options, rep int, attach func(o options, config, dir string) (func(), error)) (latencyRun, error) {
	r := latencyRun{label: fmt.Sprintf("cronvisor #%d", rep+1)}
	dir := filepath.Join(o.dir, fmt.Sprintf("cronvisor-%d", rep+1))
	if attach != nil {
		dir += "-attached"
	}
	if o.alerts != "" {
		dir += "-alerts"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	stamps := filepath.Join(dir, "stamps")
	config := filepath.Join(dir, "jobs.yaml")
	sched := o.cronvisorSchedule()
	if err := writeJobs(config, o.jobs, func(int) string { return sched }, jobCommand(o, []string{o.stamp, stamps}), o); err != nil {
		return r, err
	}
	d, err := startDaemon(o.cronvisor, config, dir)
	if err != nil {
		return r, err
	}
	ready, err := d.waitReady(time.Minute)
	if err != nil {
		_ = d.stop(time.Second)
		return r, err
	}
	detach := func() {}
	if attach != nil {
		if detach, err = attach(o, config, dir); err != nil {
			_ = d.stop(time.Second)
			return r, err
		}
		ready = time.Now()
	}
	r.history = func() ([]historyRecord, error) { return readHistory(o.cronvisor, config) }
	err = r.measure(o, d, ready, stamps, detach, func(start, end time.Time) error {
		return r.countRecords(start, end)
	})
	return r, err
}

// measure takes the window after ready: the daemon's CPU over it, then,
// once the last fires finished, detach, the daemon stopped, count of its
// log, and the stamps' starts.
func (r *latencyRun) measure(o options, d *daemon, ready time.Time, stamps string, detach func(),
	count func(start, end time.Time) error) error {
	start, end := window(ready, o)
	var err error
	r.cpu, err = measureCPU(d.pid(), start, end)
	time.Sleep(time.Until(end.Add(2 * time.Second))) // let the last fires finish
	detach()
	t0 := time.Now()
	serr := d.stop(2 * time.Minute) // 1,000 jobs: a stop may take long, which is a figure, not a failed run
	r.stopped = time.Since(t0)
	if err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	r.period = o.slotPeriod() // count reads it: a missed record's slots are period apart
	if err := count(start, end); err != nil {
		return err
	}
	r.expected = o.jobs * slots(start, end, r.period)
	r.window = [2]time.Time{start, end}
	r.stamps, r.log = stamps, d.logPath
	r.starts, r.last, err = readStamps(stamps, start, end, r.period)
	return err
}

// reasonKind shortens a reason to what tells reasons apart, without the
// pids and run ids that make each one unique.
func reasonKind(reason string) string {
	if i := strings.IndexAny(reason, "0123456789("); i > 0 {
		reason = reason[:i]
	}
	return strings.TrimSpace(reason)
}

// runBare is the floor: this process fires the same program from a Go
// timer at each slot (whole second or minute), one goroutine and os/exec per command, with
// the slot in the same variable; no lock, no history, no log.
func runBare(o options, rep int) (latencyRun, error) {
	r := latencyRun{label: fmt.Sprintf("bare #%d", rep+1)}
	stamps := filepath.Join(o.dir, fmt.Sprintf("bare-%d.stamps", rep+1))
	start, end := window(time.Now(), o)
	var runs sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value // the first failed run's error, for the report
	loop := make(chan struct{})
	go func() {
		defer close(loop)
		env := os.Environ()
		p := o.slotPeriod()
		for slot := time.Now().Truncate(p).Add(p); slot.Before(end); slot = slot.Add(p) {
			t := time.NewTimer(time.Until(slot))
			<-t.C
			e := append(env[:len(env):len(env)], "CRONVISOR_SCHEDULED_AT="+slot.Format(time.RFC3339Nano))
			for i := range o.jobs {
				runs.Go(func() {
					cmd := exec.Command(o.stamp, stamps)
					if o.viaShell {
						cmd = exec.Command("/bin/sh", "-c", shellLine([]string{o.stamp, stamps}, i))
					}
					cmd.Env = append(e[:len(e):len(e)], "CRONVISOR_JOB="+jobName(i))
					if err := cmd.Run(); err != nil { // no pipe of ours: the floor's own fds stay few
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err.Error())
					}
				})
			}
		}
	}()
	var err error
	r.cpu, err = measureCPU(os.Getpid(), start, end)
	<-loop
	runs.Wait()
	if err != nil {
		return r, err
	}
	if n := failed.Load(); n > 0 {
		// A figure of the floor on this machine, not a reason to drop
		// the part: its table shows them, with the first one's error.
		r.failed = int(n)
		r.reasons = map[string]int{fmt.Sprintf("the first: %v", firstErr.Load()): int(n)}
	}
	r.period = o.slotPeriod()
	r.expected = o.jobs * slots(start, end, r.period)
	r.window = [2]time.Time{start, end}
	r.stamps = stamps
	r.starts, r.last, err = readStamps(stamps, start, end, r.period)
	return r, err
}

// calibrate starts the stamp 50 times, one at a time, with the slot set
// to the instant before exec.Cmd.Start, and returns the medians of the
// time Start took (fork and exec) and of the stamp's lateness (fork, exec
// and the Go runtime's start-up until main reads the clock): the part of
// every start figure that is the measuring job's own.
func calibrate(o options) (spawn, start time.Duration, err error) {
	file := filepath.Join(o.dir, "calibrate.stamps")
	var spawns []time.Duration
	for range 50 {
		t0 := time.Now()
		cmd := exec.Command(o.stamp, file)
		cmd.Env = append(os.Environ(), "CRONVISOR_SCHEDULED_AT="+t0.Format(time.RFC3339Nano))
		if err := cmd.Start(); err != nil {
			return 0, 0, err
		}
		spawns = append(spawns, time.Since(t0))
		if err := cmd.Wait(); err != nil {
			return 0, 0, err
		}
	}
	starts, _, err := readStamps(file, time.Unix(0, 0), time.Now(), time.Second)
	return quantile(spawns, .5), quantile(starts, .5), err
}

func jobName(i int) string { return fmt.Sprintf("job-%05d", i) }

// writeJobs writes a jobs.yaml of n jobs running command(i) (a YAML
// value, see jobCommand) on schedule(i), with o's durability. o.alerts
// is added at the end of defaults and may close it with top-level keys.
func writeJobs(path string, n int, schedule, command func(i int) string, o options) error {
	var b strings.Builder
	b.WriteString("state_dir: state\nshutdown_grace: 10s\n")
	if o.durability != "" {
		b.WriteString("durability: " + o.durability + "\n")
	}
	extra := o.alerts
	b.WriteString("defaults:\n  timeout: 30s\n  overlap: skip\n  kill_grace: 1s\n" + extra + "jobs:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: %s\n    schedule: %q\n    command: %s\n", jobName(i), schedule(i), command(i))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// jobCommand is job i's command as a YAML value: argv as a list (exec'd
// directly), or with o.viaShell the string shellLine(argv, i), which
// cronvisor runs with /bin/sh -c.
func jobCommand(o options, argv []string) func(i int) string {
	if o.viaShell {
		return func(i int) string { return strconv.Quote(shellLine(argv, i)) }
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = strconv.Quote(a)
	}
	list := "[" + strings.Join(quoted, ", ") + "]"
	return func(int) string { return list }
}
