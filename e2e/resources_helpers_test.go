package e2e

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/harness/redistest"
)

// resBackend is one lock backend as the resource tests use it: a new
// "host" (its own directory, jobs.yaml and state dir) on the backend
// every host of the test shares.
type resBackend struct {
	kind string
	// shared says whether hosts with state dirs of their own share its
	// slots: the file backend's live in one state dir, so not it.
	shared bool
	host   func(t *testing.T, jobs string) *sandbox
	ttl    time.Duration // Redis's lease, 0 for the others
}

// resourceKinds are the backends every resource test runs on.
var resourceKinds = []string{"file", "redis", "mysql", "postgres"}

// newResBackend starts (or reuses) kind's server for the test.
func newResBackend(t *testing.T, kind string) resBackend {
	t.Helper()
	switch kind {
	case "file":
		return resBackend{kind: kind, host: func(t *testing.T, jobs string) *sandbox {
			return newSandbox(t, "shutdown_grace: 3s\n"+jobs)
		}}
	case "redis":
		srv := redistest.New(t)
		// A ttl longer than a daemon's restart, as docs/operations.md
		// asks: the next daemon takes a dead one's leases over in time.
		return resBackend{kind: kind, shared: true, ttl: 5 * time.Second, host: func(t *testing.T, jobs string) *sandbox {
			return newSandbox(t, fmt.Sprintf("lock_backend: {type: redis, url: %q, ttl: 5s}\nshutdown_grace: 3s\n%s", srv.URL(), jobs))
		}}
	default:
		srv := sharedSQLServer(t, kind)
		db, _ := srv.newDB(t)
		return resBackend{kind: kind, shared: true, host: func(t *testing.T, jobs string) *sandbox {
			return sqlSandbox(t, srv, db, jobs)
		}}
	}
}

// hogAndPatient are two jobs on db (one slot): hog holds it a minute,
// each fire of patient waits for it (on_full: wait, up to 5 minutes).
const hogAndPatient = `resources:
  db: 1
jobs:
  - name: hog
    schedule: "@every 1s"
    uses: [db]
    command: sleep 60
    timeout: 2m
  - name: patient
    schedule: "@every 1s"
    uses: [db]
    on_full: wait
    max_wait: 5m
    command: "true"
    timeout: 10s
`

// dbJobs are n jobs r0, r1, ... each using one slot of db (2 slots),
// firing every second and sleeping secs(i) seconds; each appends its own
// start and end to out (O_APPEND, one line each), with its host, run id
// and pid, and at its start the slots it was given and what its fd 5 is:
// the ground truth the tests judge by. extra is added to every job.
func dbJobs(out string, n int, secs func(i int) string, extra string) string {
	var b strings.Builder
	b.WriteString("resources:\n  db: 2\njobs:\n")
	for i := range n {
		fmt.Fprintf(&b, `  - name: r%d
    schedule: "@every 1s"
    uses: [db]
    command: trap 'trap "" TERM; echo "end $(date +%%s%%N) $CRONVISOR_JOB $(hostname) $CRONVISOR_RUN_ID $$" >> %[2]s' EXIT; trap 'exit 143' TERM; echo "start $(date +%%s%%N) $CRONVISOR_JOB $(hostname) $CRONVISOR_RUN_ID $$ res=$CRONVISOR_RESOURCES fd5=$(readlink /proc/self/fd/5)" >> %[2]s; sleep %[3]s & wait
    timeout: 60s
    kill_grace: 1s
%[4]s`, i, out, secs(i), extra)
	}
	return b.String()
}

// resRun is one run as the job itself told it; end is zero while it
// goes on (or when it was ended without a word).
type resRun struct {
	job, host, runID string
	pid              int
	slots            string // CRONVISOR_RESOURCES
	fd5              string // readlink of its fd 5
	start, end       time.Time
}

func (r resRun) String() string {
	end := "…"
	if !r.end.IsZero() {
		end = r.end.Format("15:04:05.000")
	}
	return fmt.Sprintf("%s on %s (%s, pid %d) [%s, %s]", r.job, r.host, r.slots, r.pid, r.start.Format("15:04:05.000"), end)
}

// readResRuns reads the runs of out, in order of start.
func readResRuns(t *testing.T, out string) []resRun {
	t.Helper()
	byRun := map[string]*resRun{}
	var order []*resRun
	for _, l := range lines(readFile(t, out)) {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue // a line being written
		}
		ns, _ := strconv.ParseInt(f[1], 10, 64)
		pid, _ := strconv.Atoi(f[5])
		key := f[4] + "/" + f[5]
		switch f[0] {
		case "start":
			r := &resRun{job: f[2], host: f[3], runID: f[4], pid: pid, start: time.Unix(0, ns)}
			for _, kv := range f[6:] {
				if v, ok := strings.CutPrefix(kv, "res="); ok {
					r.slots = v
				} else if v, ok := strings.CutPrefix(kv, "fd5="); ok {
					r.fd5 = v
				}
			}
			byRun[key] = r
			order = append(order, r)
		case "end":
			if r := byRun[key]; r != nil {
				r.end = time.Unix(0, ns)
			}
		}
	}
	out2 := make([]resRun, 0, len(order))
	for _, r := range order {
		out2 = append(out2, *r)
	}
	slices.SortFunc(out2, func(a, b resRun) int { return a.start.Compare(b.start) })
	return out2
}

// maxConcurrent is the most runs going on at one instant (a run without
// an end counts until now), and the runs of one such instant. An end and
// a start at the same nanosecond count the end first.
func maxConcurrent(runs []resRun) (int, []resRun) {
	type edge struct {
		at    time.Time
		delta int
		i     int
	}
	var edges []edge
	now := time.Now()
	for i, r := range runs {
		end := r.end
		if end.IsZero() {
			end = now
		}
		edges = append(edges, edge{r.start, 1, i}, edge{end, -1, i})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.delta, b.delta))
	})
	best, cur := 0, map[int]bool{}
	var at []resRun
	for _, e := range edges {
		if e.delta < 0 {
			delete(cur, e.i)
			continue
		}
		cur[e.i] = true
		if len(cur) > best {
			best, at = len(cur), nil
			for i := range cur {
				at = append(at, runs[i])
			}
		}
	}
	return best, at
}

// slotOverlaps lists the pairs of runs given the same slot whose
// intervals meet: a slot is one holder at a time.
func slotOverlaps(runs []resRun) []string {
	var bad []string
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			if a.slots == "" || a.slots != b.slots {
				continue
			}
			if a.end.IsZero() || b.start.Before(a.end) {
				bad = append(bad, fmt.Sprintf("%s and %s", a, b))
			}
		}
	}
	return bad
}

// fullReason is a skip's reason when db is full: its two holders named.
var fullReason = regexp.MustCompile(`^resource db full: held by (r\d) on (\S+) since \d\d:\d\d:\d\d, (r\d) on (\S+) since \d\d:\d\d:\d\d$`)

// resTally is what one host's history says of its fires.
type resTally struct {
	fires, ran, fullSkips, lockSkips, slotSkips, otherSkips int
	startKilled                                             int      // runs whose supervisor died as they started
	gaps                                                    []string // fires missing from the record
	// spans are each job's first and last recorded fire.
	spans map[string][2]time.Time
}

// startKilled is the reason of a run whose supervisor died as it was
// starting.
var startKilled = regexp.MustCompile(`^supervisor \(pid \d+ on \S+\) died as the run was starting; whether it ran is unknown$`)

// rawRecord is one `history --json` line, read field by field so that
// the new fields are checked by their contract names.
type rawRecord map[string]any

func (r rawRecord) str(k string) string { s, _ := r[k].(string); return s }

// checkResRecords holds host's `history --json` to the fires: every
// slot of every job between its first and last record has exactly one
// record (ran, or skipped with the contract's reason), every run the
// jobs told of on this host has its record, with the slot it was given.
func checkResRecords(t *testing.T, s *sandbox, host, kind string, runs []resRun) resTally {
	t.Helper()
	tally := resTally{spans: map[string][2]time.Time{}}
	bySlot := map[string]map[time.Time]int{}
	ranByID := map[string]rawRecord{}
	startKilledIDs := map[string]bool{}
	for _, m := range s.historyRaw() {
		r := rawRecord(m)
		at, err := time.Parse(time.RFC3339Nano, r.str("scheduled_at"))
		if err != nil || r["resources"] == nil {
			t.Errorf("%s: record %v: scheduled_at %v, resources %v (want an array)", host, m, err, r["resources"])
			continue
		}
		if bySlot[r.str("job")] == nil {
			bySlot[r.str("job")] = map[time.Time]int{}
		}
		bySlot[r.str("job")][at]++
		tally.fires++
		// A supervisor killed as a run was starting leaves a record of
		// a run that may not have begun: its wait is unknown (null), and
		// no job need tell of it.
		if startKilled.MatchString(r.str("reason")) && r.str("outcome") == "interrupted" {
			tally.startKilled++
			if w := r["resource_wait_ms"]; w != nil && w != 0.0 {
				t.Errorf("%s: record of %s killed at its start: resource_wait_ms %v", host, r.str("job"), w)
			}
			startKilledIDs[r.str("run_id")] = true
		} else if w := r["resource_wait_ms"]; (r.str("outcome") == "skipped" && w != nil) || (r.str("outcome") != "skipped" && w != 0.0) {
			// null for a fire that neither took a slot nor waited, 0 for
			// a run that took its slot at once: no job here waits.
			t.Errorf("%s: %s record of %s: resource_wait_ms %v; no job here waits", host, r.str("outcome"), r.str("job"), w)
		}
		if r.str("outcome") != "skipped" {
			tally.ran++
			ranByID[r.str("run_id")] = r
			continue
		}
		tally.countSkip(t, host, r.str("reason"))
	}
	for job, slots := range bySlot {
		var gaps []string
		gaps, tally.spans[job] = slotGaps(job, slots)
		tally.gaps = append(tally.gaps, gaps...)
	}
	for _, run := range runs {
		if run.host != host {
			continue
		}
		rec, ok := ranByID[run.runID]
		if !ok {
			t.Errorf("%s: run %s has no record", host, run)
			continue
		}
		if got := fmt.Sprint(rec["resources"]); got != "["+run.slots+"]" {
			t.Errorf("%s: run %s recorded resources %s, the run was given %q", host, run, got, run.slots)
		}
		delete(ranByID, run.runID)
	}
	for id, rec := range ranByID {
		if startKilledIDs[id] {
			continue // it never began
		}
		t.Errorf("%s: record of run %s (%s %s: %s) that no job told of", host, id, rec.str("job"), rec.str("outcome"), rec.str("reason"))
	}
	return tally
}

// countSkip sorts a skip by its reason; an unknown reason fails the test.
func (tl *resTally) countSkip(t *testing.T, host, reason string) {
	t.Helper()
	switch {
	case strings.HasPrefix(reason, "resource db full"):
		tl.fullSkips++
		if !fullReason.MatchString(reason) {
			t.Errorf("%s: resource skip reason %q, want %s", host, reason, fullReason)
		}
	case strings.HasPrefix(reason, "lock held by"):
		tl.lockSkips++ // the job's own last run, here or on a peer
		if strings.Contains(reason, "outside cronvisor") {
			t.Errorf("%s: lock skip reason %q names no run: every holder here is a cronvisor run", host, reason)
		}
	case strings.HasPrefix(reason, "slot already run"):
		tl.slotSkips++ // a peer ran this slot
	case reason == "supervisor stopping":
		tl.otherSkips++ // a fire cancelled by the SIGTERM at the end
	case strings.HasPrefix(reason, "missed while down"):
		tl.otherSkips++ // a host starting after its peers: the slots since their last run
	case strings.HasPrefix(reason, "lock backend unreachable") || strings.HasPrefix(reason, "resource backend unreachable"):
		tl.otherSkips++ // a server that did not answer a loaded machine in time: still one record
	case strings.HasPrefix(reason, "missed: supervisor woke late"):
		tl.otherSkips++ // a loaded machine froze the daemon past a slot: the slots it passed, one record each
	default:
		tl.otherSkips++
		t.Errorf("%s: unexpected skip reason %q", host, reason)
	}
}

// slotGaps lists the seconds between job's first and last recorded fire
// that have no record, and those with more than one; and the first and
// last.
func slotGaps(job string, slots map[time.Time]int) ([]string, [2]time.Time) {
	var first, last time.Time
	for at := range slots {
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	var bad []string
	for at := first; !at.After(last); at = at.Add(time.Second) {
		if n := slots[at]; n != 1 {
			bad = append(bad, fmt.Sprintf("%s %s: %d records", job, at.Format("15:04:05"), n))
		}
	}
	return bad, [2]time.Time{first, last}
}

// runsDir is a directory outside every host's state dir for the jobs'
// own record of their runs.
func runsFile(t *testing.T) string { return filepath.Join(t.TempDir(), "runs.txt") }
