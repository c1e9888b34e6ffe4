package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// resLine is a `locks --json` line of a resource's slot, a lock line
// like the job locks' ({"lock":"db/0","held":true,"job":…,"host":…,
// "pid":…}) with its "resource", "size" and the resource's "waiters"
// ([{"job":…,"run_id":…}]), after the job locks' lines.
type resLine struct {
	Lock     string    `json:"lock"`
	Resource string    `json:"resource"`
	Size     int       `json:"size"`
	Held     bool      `json:"held"`
	Job      string    `json:"job"`
	Host     string    `json:"host"`
	PID      int       `json:"pid"`
	RunID    string    `json:"run_id"`
	Waiters  []resLine `json:"waiters"`
}

// resState is one resource as `locks --json` shows it.
type resState struct {
	Slots   []resLine
	Waiters []resLine
}

func (r resState) held() int {
	n := 0
	for _, s := range r.Slots {
		if s.Held {
			n++
		}
	}
	return n
}

// resourcesJSON runs `cronvisor locks --json` and returns its resources
// by name, from the lines that carry a "resource".
func (s *sandbox) resourcesJSON() map[string]resState {
	s.t.Helper()
	code, stdout, stderr := s.runCV(10*time.Second, "locks", "--json")
	if code != 0 {
		s.t.Fatalf("locks --json: exit %d; stderr %q", code, stderr)
	}
	out := map[string]resState{}
	for _, l := range lines(stdout) {
		var r resLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			s.t.Fatalf("locks --json: line %q: %v", l, err)
		}
		if r.Resource == "" {
			continue // a job's lock
		}
		st := out[r.Resource]
		st.Slots, st.Waiters = append(st.Slots, r), r.Waiters
		out[r.Resource] = st
	}
	return out
}

// TestResourceLocksShowHoldersAndWaiters: while db's two slots are held
// by long runs, `locks --json` names their holders (job, host, pid), and
// a job with on_full: wait shows as db's waiter (and `status` says it
// waits); the console's Locks
// view (a real terminal: tmux) lists db with its holders. Once the
// holders end, the waiter runs, and its record carries its wait.
func TestResourceLocksShowHoldersAndWaiters(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	out := runsFile(t)
	jobs := dbJobs(out, 2, func(int) string { return "6" }, "") + `  - name: patient
    schedule: "@every 1s"
    uses: [db]
    on_full: wait
    max_wait: 30s
    command: "true"
    timeout: 10s
`
	s := newSandbox(t, "shutdown_grace: 3s\n"+jobs)
	d := s.startHost("host-a")
	defer func() {
		if t.Failed() {
			t.Logf("daemon:\n%s", tail(d.stderr(), 30))
		}
	}()
	var db resState
	waitFor(t, 15*time.Second, "db full (slots naming the runs' pids), with patient waiting", func() bool {
		db = s.resourcesJSON()["db"]
		// The slots name the runs' processes once they started (the
		// supervisor until then, a millisecond).
		return db.held() == 2 && len(db.Waiters) > 0 && db.Slots[0].PID != d.pid() && db.Slots[1].PID != d.pid()
	})
	t.Logf("locks --json: db %+v", db)
	holders := map[string]bool{}
	for _, sl := range db.Slots {
		holders[sl.Job] = true
		if sl.Host != "host-a" || sl.PID == 0 || sl.RunID == "" {
			t.Errorf("slot %+v: want host host-a and the run's pid", sl)
		}
	}
	if !holders["r0"] || !holders["r1"] || len(db.Slots) != 2 || db.Slots[0].Lock != "db/0" || db.Waiters[0].Job != "patient" {
		t.Errorf("locks --json: db %+v, want 2 slots held by r0 and r1, patient waiting", db)
	}
	var st string
	waitFor(t, 10*time.Second, "status to say patient waits for db", func() bool {
		_, st, _ = s.runCV(10*time.Second, "status")
		return strings.Contains(lineWith(st, "patient"), "waiting for db (2/2 held)")
	})
	t.Logf("status: %s", lineWith(st, "patient"))
	tm := startTmux(t, s, 140, 40, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the console", func(sc string) bool { return strings.Contains(sc, "r0") })
	tm.keys(":locks", "Enter")
	sc := tm.await(10*time.Second, "db in the Locks view with its holders", func(sc string) bool {
		return strings.Contains(sc, "[Locks]") && strings.Contains(sc, "db") &&
			strings.Contains(sc, "r0") && strings.Contains(sc, "r1")
	})
	t.Logf("the Locks view:\n%s", sc)
	tm.keys(":q", "Enter")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
	waited := waitedRecord(t, s)
	stopDaemons(t, d)
	if waited == nil {
		t.Fatal("no run of patient records a wait")
	}
	t.Logf("patient ran after waiting %v ms (resources %v)", waited["resource_wait_ms"], waited["resources"])
}

// waitedRecord waits for a run of patient that waited, and returns its
// record.
func waitedRecord(t *testing.T, s *sandbox) map[string]any {
	t.Helper()
	var rec map[string]any
	waitFor(t, 20*time.Second, "a run of patient after a wait", func() bool {
		for _, m := range s.historyRaw("--job", "patient") {
			if w, ok := m["resource_wait_ms"].(float64); ok && w > 0 && m["outcome"] != "skipped" {
				rec = m
				return true
			}
		}
		return false
	})
	return rec
}

// TestResourceWaitersSeenOnEveryHost: two hosts on a shared backend, one
// fire holding db's only slot and a fire of patient waiting for it: both
// hosts' `locks --json` list the waiter, with the host it waits on.
func TestResourceWaitersSeenOnEveryHost(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	for _, kind := range []string{"redis", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			be := newResBackend(t, kind)
			hosts := []*sandbox{be.host(t, hogAndPatient), be.host(t, hogAndPatient)}
			names := []string{"host-a", "host-b"}
			var daemons []*proc
			for i, h := range hosts {
				daemons = append(daemons, h.startHost(names[i]))
			}
			defer func() {
				if t.Failed() {
					for i, d := range daemons {
						t.Logf("%s:\n%s", names[i], tail(d.stderr(), 20))
					}
				}
			}()
			views := make([]resState, len(hosts))
			waitFor(t, 20*time.Second, "both hosts to list patient waiting for db", func() bool {
				for i, h := range hosts {
					views[i] = h.resourcesJSON()["db"]
					if len(views[i].Waiters) != 1 || views[i].Waiters[0].Job != "patient" {
						return false
					}
				}
				return true
			})
			a, b := views[0].Waiters[0], views[1].Waiters[0]
			if a.Host != b.Host || a.RunID != b.RunID || (a.Host != "host-a" && a.Host != "host-b") {
				t.Errorf("waiters: host-a lists %+v, host-b %+v; want the same fire, on its host", a, b)
			}
			t.Logf("%s: both hosts list patient (run %s) waiting on %s; db held by %s on %s", kind, a.RunID, a.Host, views[0].Slots[0].Job, views[0].Slots[0].Host)
			stopDaemons(t, daemons...)
		})
	}
}
