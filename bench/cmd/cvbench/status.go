package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// statusRun is one daemon's answers to `status JOB` and `status`.
type statusRun struct {
	ready      time.Duration   // exec to "cronvisor started"
	calls      []time.Duration // wall time of each `status JOB`, the CLI's start included
	before     int64           // the daemon's VmRSS in KiB, settled, before the calls
	afterOne   int64           // after the calls of `status JOB`
	all        time.Duration   // one `status --json` of every job; 0: not asked
	allLines   int             // the jobs it printed
	afterAll   int64           // VmRSS after it
	allPeakHWM int64           // VmHWM after it
}

// status starts a daemon with o.jobs daily jobs (none due in the next
// twelve hours), reps times, and times o.calls calls of `status JOB` from
// the built binary, then, with o.statusAll, one `status --json` of every
// job; it prints the calls' p50, p99 and max and the daemon's RSS before
// and after each.
func status(o options, w io.Writer) error {
	var runs []statusRun
	for rep := range o.reps {
		r, err := runStatus(o, rep)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	fmt.Fprintf(w, "status: %d daily job(s), %d call(s) of `status JOB` per rep, %d rep(s)\n", o.jobs, o.calls, o.reps)
	fmt.Fprintf(w, "%-4s %9s %8s %8s %8s %11s %11s %8s %10s %11s %8s %9s\n", "run", "ready s", "p50 ms", "p99 ms", "max ms",
		"RSS MiB", "after MiB", "growth", "all s", "after MiB", "growth", "HWM MiB")
	for i, r := range runs {
		allS, grownAll := "-", "-"
		if r.all > 0 {
			allS, grownAll = fmt.Sprintf("%.2f", r.all.Seconds()), growth(r.before, r.afterAll)
		}
		fmt.Fprintf(w, "#%-3d %9.2f %8.0f %8.0f %8.0f %11.0f %11.0f %8s %10s %11.0f %8s %9.0f\n", i+1, r.ready.Seconds(),
			ms(quantile(r.calls, 0.5)), ms(quantile(r.calls, 0.99)), ms(quantile(r.calls, 1)),
			mib(r.before), mib(r.afterOne), growth(r.before, r.afterOne), allS, mib(r.afterAll), grownAll, mib(r.allPeakHWM))
	}
	return nil
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

func growth(before, after int64) string {
	if before == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*float64(after-before)/float64(before))
}

func runStatus(o options, rep int) (statusRun, error) {
	var r statusRun
	dir := filepath.Join(o.dir, fmt.Sprintf("status-%d", rep+1))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	config := filepath.Join(dir, "jobs.yaml")
	hour := (time.Now().Hour() + 12) % 24
	if err := writeJobs(config, o.jobs, func(i int) string { return fmt.Sprintf("%d %d * * *", i%60, hour) },
		jobCommand(o, []string{"/bin/true"}), o); err != nil {
		return r, err
	}
	d, err := startDaemon(o.cronvisor, config, dir)
	if err != nil {
		return r, err
	}
	defer func() { _ = d.stop(time.Minute) }()
	ready, err := d.waitReady(15 * time.Minute)
	if err != nil {
		return r, err
	}
	r.ready = ready.Sub(d.started)
	if _, _, err := settle(d.pid(), 5*time.Minute); err != nil {
		return r, err
	}
	if err := r.measure(o, config, d.pid()); err != nil {
		return r, err
	}
	return r, d.stop(time.Minute)
}

// measure makes the calls and reads the daemon's RSS around them.
func (r *statusRun) measure(o options, config string, pid int) error {
	u, err := readUsage(pid)
	if err != nil {
		return err
	}
	r.before = u.rss
	for k := range o.calls {
		name := jobName((k*7919 + o.jobs/2) % o.jobs) // spread over the list
		took, out, err := cli(o.cronvisor, time.Minute, "--config", config, "status", name)
		if err != nil || !bytes.Contains(out, []byte(name)) {
			return fmt.Errorf("status %s: %v; stdout %q", name, err, out)
		}
		r.calls = append(r.calls, took)
	}
	if u, err = readUsage(pid); err != nil {
		return err
	}
	r.afterOne = u.rss
	if !o.statusAll {
		return nil
	}
	took, out, err := cli(o.cronvisor, 10*time.Minute, "--config", config, "status", "--json")
	if err != nil {
		return fmt.Errorf("status --json: %v", err)
	}
	r.all, r.allLines = took, bytes.Count(out, []byte("\n"))
	if r.allLines != o.jobs {
		return fmt.Errorf("status --json printed %d jobs, want %d", r.allLines, o.jobs)
	}
	if u, err = readUsage(pid); err != nil {
		return err
	}
	r.afterAll, r.allPeakHWM = u.rss, u.hwm
	return nil
}

// cli runs bin with args in its own process group, killed with the group
// past timeout, and returns its wall time and stdout.
func cli(bin string, timeout time.Duration, args ...string) (time.Duration, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(errb.String()))
	}
	return took, out.Bytes(), err
}
