package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cronvisor/internal/proc"
)

// rssJobs and rssSettle: the rss part's daemons hold 3 hourly jobs, and
// are read this long after they are ready. Busy, the same 3 jobs run
// every second and the daemons are read after rssBusy of it: the memory
// of a daemon that has run its jobs, not only started.
const (
	rssJobs   = 3
	rssSettle = 5 * time.Second
	rssBusy   = 15 * time.Second
)

// nMem is how many /proc/PID/status lines memFields names.
const nMem = 5

// memFields are the /proc/PID/status lines the rss part reads, in KiB.
func memFields() [nMem]string {
	return [nMem]string{"VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM"}
}

// memStatus reads memFields from a /proc/PID/status file, in their order.
func memStatus(path string) ([nMem]int64, error) {
	var out [nMem]int64
	f, err := os.Open(path)
	if err != nil {
		return out, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		for i, name := range memFields() {
			if k == name {
				out[i], _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			}
		}
	}
	return out, sc.Err()
}

// rssRun is one side's memory after settling, and its keepers'.
type rssRun struct {
	mem     [nMem]int64
	keepers int
	keeper  [nMem]int64 // summed over the keepers
}

// keepersOf finds the processes named proc.KeeperName (argv[0]) whose
// parent is pid, or in pid's process group (the benchmark starts each
// daemon as a group leader).
func keepersOf(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.HasPrefix(string(cmd), proc.KeeperName+"\x00") {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 2 && (f[1] == strconv.Itoa(pid) || f[2] == strconv.Itoa(pid)) {
			out = append(out, n)
		}
	}
	return out, nil
}

// measureRSS waits settle, then reads pid's memory and its keepers'.
func measureRSS(pid int, settle time.Duration) (rssRun, error) {
	var r rssRun
	time.Sleep(settle)
	var err error
	if r.mem, err = memStatus(filepath.Join("/proc", strconv.Itoa(pid), "status")); err != nil {
		return r, err
	}
	ks, err := keepersOf(pid)
	if err != nil {
		return r, err
	}
	for _, k := range ks {
		m, err := memStatus(filepath.Join("/proc", strconv.Itoa(k), "status"))
		if err != nil {
			continue // it just exited
		}
		r.keepers++
		for i := range m {
			r.keeper[i] += m[i]
		}
	}
	return r, nil
}

// runRSSSide starts one side with rssJobs hourly jobs in dir (busy: every
// second), waits for it to be ready, measures it and stops it.
func runRSSSide(o options, side, rep int, busy bool) (rssRun, error) {
	dir := filepath.Join(o.dir, fmt.Sprintf("rss-%d-%d-%v", side, rep+1, busy))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return rssRun{}, err
	}
	minute := idleMinutes(time.Now())
	hourly := func(i int) string { return fmt.Sprintf("%d * * * *", minute(i)) }
	settle := rssSettle
	if busy {
		settle = rssBusy
		hourly = func(int) string { return everySecondCron }
		if side == cronvisorSide {
			hourly = func(int) string { return "* * * * * *" }
		}
	}
	var d *daemon
	var err error
	switch side {
	case cronvisorSide:
		config := filepath.Join(dir, "jobs.yaml")
		if err = writeJobs(config, rssJobs, hourly, jobCommand(o, []string{"/bin/true"}), o); err != nil {
			return rssRun{}, err
		}
		if d, err = startDaemon(o.cronvisor, config, dir); err == nil {
			_, err = d.waitReady(time.Minute)
		}
	default:
		crontab := filepath.Join(dir, "crontab")
		if err = writeCrontab(crontab, rssJobs, hourly, []string{"/bin/true"}); err != nil {
			return rssRun{}, err
		}
		if side == floorSide {
			d, err = startProcess(dir, o.floor, crontab)
		} else {
			var addr string
			if d, addr, err = startSupercronic(o.supercronic, crontab, dir); err == nil {
				_, err = d.waitMetrics(addr, time.Minute)
			}
		}
	}
	if err != nil {
		if d != nil {
			_ = d.stop(time.Second)
		}
		return rssRun{}, err
	}
	r, err := measureRSS(d.pid(), settle)
	if serr := d.stop(30 * time.Second); err == nil {
		err = serr
	}
	return r, err
}

// compareRSS measures a daemon holding 3 hourly jobs on each side, o.reps
// times in turn (the floor when o.floor is set), and prints its memory;
// then supercronic and cronvisor running the 3 jobs every second.
func compareRSS(o options, w io.Writer) ([]summaryRow, error) {
	var idle, busy [3][]rssRun
	for rep := range o.reps {
		for side := range idle {
			if side == floorSide && o.floor == "" {
				continue
			}
			r, err := runRSSSide(o, side, rep, false)
			if err != nil {
				return nil, err
			}
			idle[side] = append(idle[side], r)
		}
		for _, side := range []int{supercronicSide, cronvisorSide} {
			r, err := runRSSSide(o, side, rep, true)
			if err != nil {
				return nil, err
			}
			busy[side] = append(busy[side], r)
		}
	}
	rows := printRSS(o, w, idle, false)
	return append(rows, printRSS(o, w, busy, true)...), nil
}

// printRSS prints every rss run and the medians, and returns the
// summary's rows.
func printRSS(o options, w io.Writer, runs [3][]rssRun, busy bool) []summaryRow {
	what, label := fmt.Sprintf("%d hourly jobs (none due), read %v", rssJobs, rssSettle), fmt.Sprintf("%d-job daemon", rssJobs)
	if busy {
		what, label = fmt.Sprintf("%d jobs every second, read %v", rssJobs, rssBusy), fmt.Sprintf("%d-job daemon, busy", rssJobs)
	}
	fmt.Fprintf(w, "compare rss: a daemon with %s after it is ready "+
		"(cronvisor: its ready record; supercronic: its metrics served; the floor: exec), %d rep(s); MiB from /proc/PID/status\n",
		what, o.reps)
	fmt.Fprintf(w, "%-16s %8s %8s %8s %8s %8s %8s %12s %12s\n", "run", "VmRSS", "RssAnon", "RssFile", "RssShmem",
		"VmHWM", "keepers", "keeper RSS", "keeper anon")
	mib := func(k int64) float64 { return float64(k) / 1024 }
	var m [3][nMem + 2]float64
	names := [3]string{"floor", "supercronic", "cronvisor"}
	for side, rs := range runs {
		var cols [nMem + 2][]float64
		for i, r := range rs {
			var v [nMem + 2]float64
			for k := range r.mem {
				v[k] = mib(r.mem[k])
			}
			v[nMem], v[nMem+1] = mib(r.keeper[0]), mib(r.keeper[1])
			fmt.Fprintf(w, "%-16s %8.1f %8.1f %8.1f %8.1f %8.1f %8d %12.1f %12.1f\n", fmt.Sprintf("%s #%d", names[side], i+1),
				v[0], v[1], v[2], v[3], v[4], r.keepers, v[5], v[6])
			for k := range v {
				cols[k] = append(cols[k], v[k])
			}
		}
		for k := range cols {
			m[side][k] = median(cols[k])
		}
	}
	var rows []summaryRow
	for k, f := range []string{"RSS (MiB)", "RssAnon (MiB)", "RssFile (MiB)"} {
		rows = append(rows, summaryRow{figure: fmt.Sprintf("%s: %s", label, f), unit: "%.1f",
			has:  [3]bool{len(runs[floorSide]) > 0, true, true},
			vals: [3]float64{m[floorSide][k], m[supercronicSide][k], m[cronvisorSide][k]}})
	}
	keeper := summaryRow{figure: label + ": its keeper process, RSS / anon (MiB)",
		text: [3]string{"n/a", "n/a", "none running (no run yet)"}}
	if k := m[cronvisorSide]; k[nMem] > 0 {
		keeper.text[cronvisorSide] = fmt.Sprintf("%.1f / %.1f", k[nMem], k[nMem+1])
	}
	return append(rows, keeper)
}

// printSizes prints both binaries' sizes, as given and stripped, and
// returns the summary's row. supercronic is stripped by strip(1) on a
// copy; cronvisor is built with -ldflags "-s -w" (o.cronvisorStripped),
// and a copy of it stripped by strip(1) is printed too.
func printSizes(o options, w io.Writer) []summaryRow {
	size := func(p string) float64 {
		st, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return float64(st.Size()) / (1 << 20)
	}
	strip := func(bin, name string) float64 {
		cp := filepath.Join(o.dir, name+".stripped")
		if b, err := os.ReadFile(bin); err != nil || os.WriteFile(cp, b, 0o755) != nil {
			return 0
		}
		if exec.Command("strip", cp).Run() != nil {
			return 0
		}
		return size(cp)
	}
	sc, cv := strip(o.supercronic, "supercronic"), strip(o.cronvisor, "cronvisor")
	sw := size(o.cronvisorStripped)
	built, figure := "not built (a prebuilt cronvisor was given)", "binary size, stripped (MiB; strip(1) of a copy of each)"
	if sw > 0 {
		built = fmt.Sprintf("%.1f", sw)
		figure = "binary size, stripped (MiB; supercronic: strip(1) of a copy, cronvisor: -ldflags '-s -w')"
	} else {
		sw = cv
	}
	fmt.Fprintf(w, "binaries (MiB): supercronic %.1f, strip(1) %.1f; cronvisor %.1f, strip(1) %.1f, -ldflags '-s -w' %s\n",
		size(o.supercronic), sc, size(o.cronvisor), cv, built)
	return []summaryRow{{figure: figure, unit: "%.1f", has: [3]bool{false, sc > 0, sw > 0}, vals: [3]float64{0, sc, sw}}}
}
