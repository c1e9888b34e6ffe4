package main

import (
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// compareParts are compare's parts in the order they run: N jobs every
// second, a burst of minute jobs, idle hourly jobs, and a 3-job daemon's
// memory.
func compareParts() []string { return []string{"1", "100", "1000", "burst", "idle", "rss"} }

// compareEvents are the notify target's events: cronvisor has no default
// `on:`, so the target takes every event that reports a problem. A stamp
// run that ends ok sends none; a skip or a failure does.
const compareEvents = "failure, timeout, skip, missed, recovered"

// compare runs cronvisor beside supercronic on the same generated
// schedules, interleaved per rep (bare floor, supercronic, cronvisor),
// every job through /bin/sh -c, and prints each part's runs, medians and
// ratios, then one summary table in markdown.
func compare(o options, parts []string, w io.Writer) error {
	if o.supercronic == "" {
		return errors.New("compare needs supercronic's binary: -supercronic PATH (bench/run.sh: SUPERCRONIC=PATH); " +
			"build one beside the project: git clone https://github.com/aptible/supercronic ../supercronic && " +
			"(cd ../supercronic && go build -o supercronic .)")
	}
	if _, err := os.Stat(o.supercronic); err != nil {
		return fmt.Errorf("-supercronic: %w", err)
	}
	parts, err := selectParts(parts)
	if err != nil {
		return err
	}
	if err := checkPartOptions(o, parts); err != nil {
		return err
	}
	hooks := &webhook{events: map[string]int{}}
	srv := httptest.NewServer(hooks)
	defer srv.Close()
	printCompareHeader(o, w)
	rows := printSizes(o, w)
	for _, p := range parts {
		po := o
		po.dir, po.viaShell = filepath.Join(o.dir, "compare-"+p), true
		po.alerts = "  notify:\n    - on: [" + compareEvents + "]\n      url: " + srv.URL + "/hook\n" +
			"metrics:\n  listen: 127.0.0.1:0\n"
		if err := os.MkdirAll(po.dir, 0o755); err != nil {
			return err
		}
		var r []summaryRow
		switch p {
		case "idle":
			po.jobs = o.idleJobs
			r, err = compareIdle(po, w)
		case "rss":
			r, err = compareRSS(po, w)
		case "burst":
			r, err = compareLateness(burstOptions(po), w)
		default:
			po.jobs, _ = strconv.Atoi(p)
			if po.jobs == 1 {
				po.duration = time.Duration(o.fires) * time.Second
			}
			r, err = compareLateness(po, w)
		}
		if err != nil {
			return fmt.Errorf("compare %s: %w", p, err)
		}
		rows = append(rows, r...)
		fmt.Fprintf(w, "webhook deliveries so far, by event (a skip at shutdown, \"supervisor stopping\", is outside the windows): %s\n\n",
			hooks.String())
	}
	printSummary(w, rows)
	return nil
}

// checkPartOptions checks the options the parts asked for need.
func checkPartOptions(o options, parts []string) error {
	if slices.Contains(parts, "1") && o.fires < 1 {
		return fmt.Errorf("compare 1: -fires %d: want at least 1", o.fires)
	}
	if slices.Contains(parts, "idle") && o.duration > 8*time.Minute {
		return fmt.Errorf("compare idle: -duration %v: at most 8m (the jobs' minutes must stay outside the window)", o.duration)
	}
	if slices.Contains(parts, "burst") && (o.burstJobs < 1 || o.burstMinutes < 1) {
		return fmt.Errorf("compare burst: -burst-jobs %d, -burst-minutes %d: want at least 1 each", o.burstJobs, o.burstMinutes)
	}
	return nil
}

// selectParts checks the parts asked for; none means all.
func selectParts(args []string) ([]string, error) {
	if len(args) == 0 {
		return compareParts(), nil
	}
	for _, a := range args {
		if !slices.Contains(compareParts(), a) {
			return nil, fmt.Errorf("compare: unknown part %q: want some of %v", a, compareParts())
		}
	}
	return args, nil
}

// describeBinary names a binary by its path, module version and commit.
func describeBinary(path string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return path
	}
	s := path + " [" + bi.Main.Path + " " + bi.Main.Version
	for _, kv := range bi.Settings {
		if kv.Key == "vcs.revision" && len(kv.Value) >= 7 {
			s += " commit " + kv.Value[:7]
		}
	}
	return s + "]"
}

// webhook is the notify target: it counts deliveries by event.
type webhook struct {
	mu     sync.Mutex
	events map[string]int
}

func (h *webhook) ServeHTTP(_ http.ResponseWriter, r *http.Request) {
	var body struct{ Event string }
	if json.NewDecoder(r.Body).Decode(&body) != nil {
		body.Event = "(not JSON)"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events[body.Event]++
}

func (h *webhook) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.events) == 0 {
		return "none"
	}
	var out []string
	for _, e := range slices.Sorted(maps.Keys(h.events)) {
		out = append(out, fmt.Sprintf("%s %d", e, h.events[e]))
	}
	return strings.Join(out, ", ")
}

// sides are the three runs of a rep, in the order they run.
const (
	floorSide = iota
	supercronicSide
	cronvisorSide
)

// compareLateness runs the three sides o.reps times with o.jobs jobs
// every second (or, with o.period a minute, every minute: the burst) and
// prints them.
func compareLateness(o options, w io.Writer) ([]summaryRow, error) {
	runs, checks, err := runLatenessSides(o)
	if err != nil {
		return nil, err
	}
	name := latenessPart(o)
	fmt.Fprintf(w, "compare %s, window %v after %v warm-up, %d rep(s); times in ms\n", name.title, o.duration, o.warmup, o.reps)
	fmt.Fprintf(w, "supercronic gives a stamp no slot: its slot is the start's %s, floored; a start later than that "+
		"would be misread as an early one of the next slot, and shows as missing or doubled\n", name.unit)
	fmt.Fprintf(w, "%-15s %13s %8s %8s %8s %10s %10s %9s %9s %8s %8s\n", "run", "starts/expect", "p50", "p99", "max",
		"last p50", "last p99", "cpu/fire", "skip/fail", "missing", "doubled")
	for rep := range o.reps {
		for side := range runs {
			printCompareRun(w, runs[side][rep], checks[side][rep])
		}
	}
	sideNames := [3]string{"bare", "supercronic", "cronvisor"}
	var m [3][6]float64
	for side := range runs {
		m[side] = medians(runs[side])
		printCompareMedians(w, "median "+sideNames[side], m[side])
	}
	printRatio(w, "cronvisor/supercronic", m[cronvisorSide], m[supercronicSide])
	printRatio(w, "cronvisor/bare", m[cronvisorSide], m[floorSide])
	printRatio(w, "supercronic/bare", m[supercronicSide], m[floorSide])
	for rep := range o.reps {
		printAccount(w, runs[supercronicSide][rep], checks[supercronicSide][rep])
		printAccount(w, runs[cronvisorSide][rep], checks[cronvisorSide][rep])
	}
	return latenessRows(name, m, runs, checks), nil
}

// runLatenessSides runs the floor, supercronic and cronvisor in turn,
// o.reps times, each after awaitSlot, and accounts for their fires.
func runLatenessSides(o options) (runs [3][]latencyRun, checks [3][]fireCheck, err error) {
	for rep := range o.reps {
		for side, run := range [3]func(options, int) (latencyRun, error){
			runBare, runSupercronic, func(o options, rep int) (latencyRun, error) { return runCronvisor(o, rep, nil) },
		} {
			awaitSlot(o.slotPeriod(), time.Now())
			r, err := run(o, rep)
			if err != nil {
				return runs, checks, err
			}
			c, err := r.checkFires(o.jobs)
			if err != nil {
				return runs, checks, err
			}
			runs[side], checks[side] = append(runs[side], r), append(checks[side], c)
		}
	}
	return runs, checks, nil
}

// burstLead is how long before a minute boundary a burst run starts its
// scheduler: time to start and warm up, without a minute's wait.
const burstLead = 12 * time.Second

// awaitSlot, for slots of a minute or more, sleeps until burstLead before
// the next boundary at least burstLead away, so that the run's window
// begins at that boundary; every-second runs start at once.
func awaitSlot(period time.Duration, now time.Time) {
	time.Sleep(untilLead(period, now))
}

// untilLead is the wait awaitSlot makes from now.
func untilLead(period time.Duration, now time.Time) time.Duration {
	if period < time.Minute {
		return 0
	}
	next := now.Truncate(period).Add(period)
	if next.Sub(now) < burstLead {
		next = next.Add(period)
	}
	return next.Add(-burstLead).Sub(now)
}

// checkFires accounts for the run's fires from its stamp file and, for
// cronvisor, its history's skip and failure records.
func (r latencyRun) checkFires(jobs int) (fireCheck, error) {
	lines, err := readStampLines(r.stamps, r.period)
	if err != nil {
		return fireCheck{}, err
	}
	var records map[fire]bool
	if strings.HasPrefix(r.label, "cronvisor") {
		if b, err := os.ReadFile(r.log); err != nil || !strings.Contains(string(b), `"msg":"serving metrics"`) {
			return fireCheck{}, fmt.Errorf("%s: cronvisor did not log \"serving metrics\" (%v): metrics are meant to be on", r.log, err)
		}
		recs, err := r.history()
		if err != nil {
			return fireCheck{}, err
		}
		records = recordedFires(recs, r.window[0], r.window[1], r.period)
	}
	return checkFires(lines, jobs, r.window[0], r.window[1], r.period, records), nil
}

// printCompareHeader says what is compared, and how each side runs.
func printCompareHeader(o options, w io.Writer) {
	fmt.Fprintf(w, "compare: supercronic %s; cronvisor %s\n", describeBinary(o.supercronic), describeBinary(o.cronvisor))
	durability := "default durability"
	if o.durability != "" {
		durability = "durability: " + o.durability
	}
	fmt.Fprintf(w, "every job runs `/bin/sh -c 'STAMP FILE JOB'` on every side; cronvisor: %s, metrics on, "+
		"one webhook target on [%s]; supercronic: its defaults and -prometheus-listen-address\n", durability, compareEvents)
}
