package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// everySecondCron is supercronic's expression for every second: seven
// fields (sec min hour dom mon dow year) for gorhill/cronexpr, which it
// tries before six and five.
const everySecondCron = "* * * * * * *"

// shellQuote quotes s for /bin/sh where it needs it.
func shellQuote(s string) string {
	plain := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@", r)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !plain(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellLine is job i's command line for /bin/sh -c: argv, then the job's
// name as the last argument, so that the stamp names its job under a
// scheduler that does not say which job it runs. Every side of compare
// runs this same line.
func shellLine(argv []string, i int) string {
	words := make([]string, 0, len(argv)+1)
	for _, a := range argv {
		words = append(words, shellQuote(a))
	}
	return strings.Join(append(words, jobName(i)), " ")
}

// writeCrontab writes a supercronic crontab of n lines: schedule(i), then
// shellLine(argv, i), which supercronic runs with /bin/sh -c.
func writeCrontab(path string, n int, schedule func(i int) string, argv []string) error {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s %s\n", schedule(i), shellLine(argv, i))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// startSupercronic runs BIN -prometheus-listen-address ADDR CRONTAB in
// dir with its defaults otherwise (text log at info level on stderr, no
// overlap, reaping off as it is not PID 1), and returns the metrics
// address.
func startSupercronic(bin, crontab, dir string) (*daemon, string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return nil, "", err
	}
	d, err := startProcess(dir, bin, "-prometheus-listen-address", addr, crontab)
	return d, addr, err
}

// checkMetrics fetches /metrics once: the daemon really serves them.
func checkMetrics(addr string) error {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return fmt.Errorf("supercronic metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("supercronic metrics: %s", resp.Status)
	}
	return nil
}

// waitMetrics waits until the daemon serves /metrics at addr.
func (d *daemon) waitMetrics(addr string, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if checkMetrics(addr) == nil {
			return time.Now(), nil
		}
		select {
		case <-d.exited:
			b, _ := os.ReadFile(d.logPath)
			return time.Time{}, fmt.Errorf("%s exited before serving metrics; log:\n%s", d.cmd.Path, b)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return time.Time{}, errors.New("no metrics in time")
}

// waitFile waits for path to exist (a job's first start: supercronic
// writes no "ready" line).
func (d *daemon) waitFile(path string, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return time.Now(), nil
		}
		select {
		case <-d.exited:
			b, _ := os.ReadFile(d.logPath)
			return time.Time{}, fmt.Errorf("%s exited before its first start; log:\n%s", d.cmd.Path, b)
		case <-time.After(2 * time.Millisecond):
		}
	}
	return time.Time{}, errors.New("no job started in time")
}

// runSupercronic measures supercronic running shellLine(stamp FILE) for
// o.jobs jobs every second, as runCronvisor does cronvisor.
func runSupercronic(o options, rep int) (latencyRun, error) {
	r := latencyRun{label: fmt.Sprintf("supercronic #%d", rep+1)}
	dir := filepath.Join(o.dir, fmt.Sprintf("supercronic-%d", rep+1))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	stamps := filepath.Join(dir, "stamps")
	crontab := filepath.Join(dir, "crontab")
	sched := everySecondCron
	if o.slotPeriod() == time.Minute {
		sched = "* * * * *"
	}
	if err := writeCrontab(crontab, o.jobs, func(int) string { return sched }, []string{o.stamp, stamps}); err != nil {
		return r, err
	}
	d, addr, err := startSupercronic(o.supercronic, crontab, dir)
	if err != nil {
		return r, err
	}
	var ready time.Time
	if sched == everySecondCron {
		ready, err = d.waitFile(stamps, time.Minute)
		if err == nil {
			err = checkMetrics(addr)
		}
	} else { // no start before the first minute: ready once it serves metrics
		ready, err = d.waitMetrics(addr, time.Minute)
	}
	if err != nil {
		_ = d.stop(time.Second)
		return r, err
	}
	err = r.measure(o, d, ready, stamps, func() {}, func(start, end time.Time) (err error) {
		r.skipped, r.failed, err = countSupercronicLog(d.logPath, start, end)
		return err
	})
	return r, err
}

// countSupercronicLog counts, among the log lines of supercronic's text
// format stamped in [start, end) (whole seconds), its skips ("job took
// too long to run": the next slots were passed over) and its failed runs
// (level=error). It keeps no record per fire: these are its warnings, not
// an account of every fire.
func countSupercronicLog(path string, start, end time.Time) (skipped, failed int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		kv := logfmt(sc.Text())
		at, err := time.Parse(time.RFC3339, kv["time"])
		if err != nil || at.Before(start.Truncate(time.Second)) || !at.Before(end) {
			continue
		}
		switch {
		case kv["level"] == "error":
			failed++
		case kv["level"] == "warning" && strings.HasPrefix(kv["msg"], "job took too long to run"):
			skipped++
		}
	}
	return skipped, failed, sc.Err()
}

// logfmt splits a logrus text line (key=value, values quoted as Go
// strings where needed) into its fields; a malformed rest is dropped.
func logfmt(line string) map[string]string {
	kv := map[string]string{}
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimLeft(line, " ") {
		k, rest, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ContainsRune(k, ' ') {
			break
		}
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				break
			}
			kv[k], _ = strconv.Unquote(q)
			line = rest[len(q):]
			continue
		}
		v, after, _ := strings.Cut(rest, " ")
		kv[k], line = v, after
	}
	return kv
}

// runIdleSupercronic starts supercronic with o.jobs hourly jobs, as
// runIdle does cronvisor.
func runIdleSupercronic(o options, rep int) (idleRun, error) {
	dir := filepath.Join(o.dir, fmt.Sprintf("idle-supercronic-%d", rep+1))
	return runIdleCrontab(o, dir, func(crontab string) (*daemon, func() error, error) {
		d, addr, err := startSupercronic(o.supercronic, crontab, dir)
		return d, func() error { return checkMetrics(addr) }, err
	})
}

// runIdleFloor starts bench/cmd/floor on the same crontab: the idle floor.
func runIdleFloor(o options, rep int) (idleRun, error) {
	dir := filepath.Join(o.dir, fmt.Sprintf("idle-floor-%d", rep+1))
	return runIdleCrontab(o, dir, func(crontab string) (*daemon, func() error, error) {
		d, err := startProcess(dir, o.floor, crontab)
		return d, func() error { return nil }, err
	})
}

// runIdleCrontab writes a crontab of o.jobs hourly lines in dir, starts a
// scheduler on it, and measures it as runIdle does cronvisor, but from
// exec until its CPU use settles: neither supercronic nor the floor
// writes a "ready" line. check runs after the idle span (a metrics
// scrape costs CPU).
func runIdleCrontab(o options, dir string, start func(crontab string) (d *daemon, check func() error, err error)) (idleRun, error) {
	var r idleRun
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	minute := idleMinutes(time.Now())
	crontab := filepath.Join(dir, "crontab")
	if err := writeCrontab(crontab, o.jobs, func(i int) string { return fmt.Sprintf("%d * * * *", minute(i)) },
		[]string{"/bin/true"}); err != nil {
		return r, err
	}
	d, check, err := start(crontab)
	if err != nil {
		return r, err
	}
	defer func() { _ = d.stop(30 * time.Second) }()
	begin, at, err := settle(d.pid(), 30*time.Second)
	if err != nil {
		return r, err
	}
	r.settled, r.startCPU, r.startTicks = at.Sub(d.started), begin.cpu, begin.ticks
	if err := r.idleSpan(d.pid(), begin, o.duration); err != nil {
		return r, err
	}
	if err := check(); err != nil {
		return r, err
	}
	return r, d.stop(30 * time.Second)
}
