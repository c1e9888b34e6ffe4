package e2e

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// skipLine checks that stderr holds exactly one line besides log records,
// a skip because the lock is held, and returns the holder pid it names.
func skipLine(t *testing.T, stderr string) int {
	t.Helper()
	// Beside it, only log records may appear: the recovery of a dead
	// supervisor's run says so when it rebuilds the run's start.
	var ls []string
	for _, l := range lines(stderr) {
		if !strings.HasPrefix(l, "time=") {
			ls = append(ls, l)
		}
	}
	if len(ls) != 1 || !strings.Contains(ls[0], "skipped") {
		t.Fatalf("want one skip line on stderr, got %q", stderr)
	}
	m := holderPIDRE.FindStringSubmatch(ls[0])
	if m == nil {
		t.Fatalf("skip line names no holder pid: %q", ls[0])
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// checkSlots checks a file of "SLOT PID" lines: no slot twice, every slot
// from first to last present. It returns the number of runs.
func checkSlots(t *testing.T, path string, first, last time.Time) int {
	t.Helper()
	seen := map[int64]string{}
	ls := lines(readFile(t, path))
	for _, l := range ls {
		slotStr, _, _ := strings.Cut(l, " ")
		slot, err := time.Parse(time.RFC3339Nano, slotStr)
		if err != nil || slot.Nanosecond() != 0 {
			t.Errorf("line %q: not a whole-second RFC3339Nano slot (%v)", l, err)
			continue
		}
		if prev, dup := seen[slot.Unix()]; dup {
			t.Errorf("slot %s ran twice: %q and %q", slotStr, prev, l)
		}
		seen[slot.Unix()] = l
	}
	for sec := first; !sec.After(last); sec = sec.Add(time.Second) {
		if _, ok := seen[sec.Unix()]; !ok {
			t.Errorf("slot %s did not run", sec.Format(time.RFC3339))
		}
	}
	return len(ls)
}

// logRecord is the part of a daemon's JSON log record the tests look at.
type logRecord struct {
	Msg, Job, Reason string
	// Repeats is how many more records like this one the daemon held
	// back (a job's skips of one kind are logged once a minute).
	Repeats int
	daemon  int
}

// daemonLogs parses the daemons' stderr, one JSON record per line.
func daemonLogs(t *testing.T, ds []*proc) []logRecord {
	t.Helper()
	var out []logRecord
	for _, d := range ds {
		for _, l := range lines(d.stderr()) {
			rec := logRecord{daemon: d.pid()}
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Errorf("daemon %d: log line is not JSON: %q", d.pid(), l)
				continue
			}
			out = append(out, rec)
		}
	}
	return out
}

// checkDaemonLogs checks job's records: one "run started" per run, and
// "run skipped" for the other daemons' fires, with the contract's reasons.
func checkDaemonLogs(t *testing.T, logs []logRecord, job string, runs, window int) {
	t.Helper()
	started, skips, slotDone := 0, 0, 0
	for _, rec := range logs {
		switch {
		case rec.Job != job:
		case rec.Msg == "run started":
			started++
		case rec.Msg == "run skipped":
			skips += 1 + rec.Repeats
			// "supervisor stopping": a fire cancelled by the SIGTERM at
			// the end while it was taking its lock, still recorded.
			if strings.HasPrefix(rec.Reason, "slot already run") {
				slotDone += 1 + rec.Repeats
			} else if !strings.HasPrefix(rec.Reason, "lock held by") && rec.Reason != "supervisor stopping" {
				t.Errorf("daemon %d: unexpected skip reason %q", rec.daemon, rec.Reason)
			}
		}
	}
	t.Logf("%d runs, %d skips (%d \"slot already run\") over a %d-slot window", started, skips, slotDone, window)
	if started != runs {
		t.Errorf("%d \"run started\" records, %d runs in the file", started, runs)
	}
	// Three daemons fire every slot and only one runs it: about two skips
	// per slot. Ask for one per slot of the window, a generous floor.
	if skips < window {
		t.Errorf("%d \"run skipped\" records for %d slots, want at least one per slot", skips, window)
	}
	// With jitter, most daemons come after the slot's run has ended.
	if job == "jittered" && slotDone < window/2 {
		t.Errorf("%d \"slot already run\" skips for %d slots, want at least %d", slotDone, window, window/2)
	}
}

// recordPID reads the holder pid from a lock file's record (0 if none).
func recordPID(t *testing.T, path string) int {
	t.Helper()
	var rec struct {
		PID int `json:"pid"`
	}
	_ = json.Unmarshal([]byte(readFile(t, path)), &rec)
	return rec.PID
}

// lockRow is one line of `cronvisor locks --json`.
type lockRow struct {
	Lock    string `json:"lock"`
	Held    bool   `json:"held"`
	PID     int    `json:"pid"`
	Job     string `json:"job"`
	Foreign bool   `json:"foreign"`
	Cmdline string `json:"cmdline"`
}

// locksJSON runs `cronvisor locks --json` and returns the row of lock name.
func (s *sandbox) locksJSON(name string) lockRow {
	s.t.Helper()
	code, stdout, stderr := s.runCV(10*time.Second, "locks", "--json")
	if code != 0 {
		s.t.Fatalf("locks --json: exit %d; stderr %q", code, stderr)
	}
	for _, l := range lines(stdout) {
		var r lockRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			s.t.Fatalf("locks --json: line %q: %v", l, err)
		}
		if r.Lock == name {
			return r
		}
	}
	s.t.Fatalf("locks --json: no row for lock %q in %q", name, stdout)
	return lockRow{}
}

// runSpan is one run's start and end (ns since the epoch).
type runSpan struct{ start, end int64 }

// spansByPID reads a file of "start NS PID" / "end NS PID" lines that a
// job appends: one span per pid.
func spansByPID(t *testing.T, path string) map[string]*runSpan {
	t.Helper()
	byPID := map[string]*runSpan{}
	for _, l := range lines(readFile(t, path)) {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("%s: bad line %q", path, l)
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("%s: bad line %q", path, l)
		}
		sp := byPID[f[2]]
		if sp == nil {
			sp = &runSpan{}
			byPID[f[2]] = sp
		}
		if f[0] == "start" {
			sp.start = ns
		} else {
			sp.end = ns
		}
	}
	return byPID
}

// checkNoOverlap reads a file of "start NS PID" / "end NS PID" lines that
// a job appends, and fails the test if two runs overlap in time. With
// complete, every run must have ended; otherwise a run without an end is
// taken as still running. It returns the number of runs.
func checkNoOverlap(t *testing.T, path string, complete bool) int {
	t.Helper()
	byPID := spansByPID(t, path)
	var all []runSpan
	for pid, sp := range byPID {
		switch {
		case sp.start == 0 || (complete && sp.end == 0):
			t.Errorf("run %s has no start or end: %+v", pid, sp)
			continue
		case sp.end == 0:
			sp.end = math.MaxInt64 // still running when read
		}
		all = append(all, *sp)
	}
	slices.SortFunc(all, func(a, b runSpan) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(all); i++ {
		if all[i].start < all[i-1].end {
			t.Errorf("runs overlap: %+v starts before %+v ended", all[i], all[i-1])
		}
	}
	return len(all)
}

// startedSince reports whether d logged the start of a run after t0.
func startedSince(t *testing.T, d *proc, t0 time.Time) bool {
	for _, r := range daemonLog(t, d) {
		if r["msg"] != "run started" {
			continue
		}
		if at, err := time.Parse(time.RFC3339Nano, r["time"].(string)); err == nil && at.After(t0) {
			return true
		}
	}
	return false
}

// readSpans reads the "start NS PID" / "end NS PID" lines of path, one
// span per pid; a span without an end fails the test, since every run
// records its end, also when ended.
func readSpans(t *testing.T, path string) []runSpan {
	t.Helper()
	byPID := spansByPID(t, path)
	var out []runSpan
	for pid, sp := range byPID {
		if sp.start == 0 || sp.end == 0 {
			t.Errorf("run %s has no start or no end: %+v", pid, *sp)
			continue
		}
		out = append(out, *sp)
	}
	slices.SortFunc(out, func(a, b runSpan) int { return cmp.Compare(a.start, b.start) })
	return out
}

// countOverlaps counts the pairs of spans that overlap in time.
func countOverlaps(spans []runSpan) int {
	n := 0
	for i := range spans {
		for j := i + 1; j < len(spans) && spans[j].start < spans[i].end; j++ {
			n++
		}
	}
	return n
}

// stallWatch measures how long this machine stopped running processes
// while a test ran: a ticker's longest gap beyond its period. A loaded CI
// machine has frozen every process for over 10 s at once (every daemon
// then woke late together); a bound on what a daemon does within some
// seconds is a bound on the seconds it could run.
type stallWatch struct {
	stop    chan struct{}
	done    chan struct{}
	longest atomic.Int64 // nanoseconds
}

// watchStalls starts a stallWatch, stopped at the test's end.
func watchStalls(t *testing.T) *stallWatch {
	const every = 50 * time.Millisecond
	w := &stallWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-w.stop:
				return
			case now := <-tick.C:
				if gap := now.Sub(last) - every; gap > time.Duration(w.longest.Load()) {
					w.longest.Store(int64(gap))
				}
				last = now
			}
		}
	}()
	t.Cleanup(func() { close(w.stop); <-w.done })
	return w
}

// Longest is the longest stall seen so far.
func (w *stallWatch) Longest() time.Duration { return time.Duration(w.longest.Load()) }
