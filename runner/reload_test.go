package runner

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cronvisor/internal/config"
)

// parseJobs loads jobs.yaml text the way the daemon does on a reload.
func parseJobs(t *testing.T, lines ...string) []config.Job {
	t.Helper()
	src := strings.Join(lines, "\n") + "\n"
	cfg, ps := config.Parse("/srv/cron/jobs.yaml", []byte(src))
	if cfg == nil {
		t.Fatalf("invalid test file:\n%s\n%v", src, ps)
	}
	return cfg.Jobs
}

// hourlyJittered is the job: hourly, jitter 60s; above is what the
// file holds before it.
func hourlyJittered(above ...string) []string {
	return append(append([]string{"jobs:"}, above...),
		"  - name: hourly",
		`    schedule: "0 * * * *"`,
		"    command: [/bin/true]",
		"    timeout: 1m",
		"    jitter: 60s")
}

// halfJitter is a jitter source that takes half of the maximum and counts
// its calls for jobs with a jitter: each is a heap entry getting a new
// jittered instant.
type halfJitter struct{ calls atomic.Int64 }

func (j *halfJitter) roll(max time.Duration) time.Duration {
	if max > 0 {
		j.calls.Add(1)
	}
	return max / 2
}

func at(h, m, s int) time.Time { return time.Date(2026, 5, 1, h, m, s, 0, time.UTC) }

// reload hands the scheduler jobs and waits until its loop has applied
// them and armed its timer again.
func (h *harness) reload(jobs []config.Job) {
	h.t.Helper()
	armed := h.clock.TimerChanged()
	h.sched.Reload(context.Background(), jobs)
	h.waitArmed(armed)
}

func (h *harness) firedAt(name string) []string {
	h.sched.WaitAll()
	var out []string
	for _, s := range h.rec.firesOf(name) {
		out = append(out, s.UTC().Format("15:04:05"))
	}
	return out
}

// TestReloadEditAboveJitteredJobKeepsItsFire is the case: at
// 12:00:10 the 12:00 fire of a job with jitter 60s waits for its jittered
// start (12:00:30 here) when a reload brings the same job one line lower.
// The fire happens at 12:00:30, once, and the next one an hour later.
func TestReloadEditAboveJitteredJobKeepsItsFire(t *testing.T) {
	for _, tc := range []struct {
		name  string
		above []string
	}{
		{"a comment line", []string{"  # the nightly report moved to its own file"}},
		{"a new job", []string{"  - {name: other, schedule: '@daily', command: [/bin/true], timeout: 1m}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jit := &halfJitter{}
			h := startHarness(t, at(11, 59, 0), parseJobs(t, hourlyJittered()...), WithJitter(jit.roll))
			h.runUntil(at(12, 0, 10))
			if next := h.sched.NextFires()["hourly"]; !next.Equal(at(12, 0, 30)) {
				t.Fatalf("before the reload the next fire is %s, want 12:00:30", next)
			}
			rolled := jit.calls.Load()
			h.reload(parseJobs(t, hourlyJittered(tc.above...)...))
			if n := jit.calls.Load() - rolled; n != 0 {
				t.Errorf("the reload rolled the jitter %d times", n)
			}
			if next := h.sched.NextFires()["hourly"]; !next.Equal(at(12, 0, 30)) {
				t.Errorf("after the reload the next fire is %s, want 12:00:30", next)
			}
			h.runUntil(at(12, 0, 29))
			if got := h.firedAt("hourly"); len(got) != 0 {
				t.Fatalf("fired %v before its jittered start", got)
			}
			h.set(at(12, 0, 30))
			if got := h.firedAt("hourly"); !slices.Equal(got, []string{"12:00:00"}) {
				t.Fatalf("fires %v, want the 12:00 slot once, at 12:00:30", got)
			}
			if next := h.sched.NextFires()["hourly"]; !next.Equal(at(13, 0, 30)) {
				t.Errorf("next fire %s, want 13:00:30", next)
			}
			if skips := h.rec.skipsOf("hourly"); len(skips) != 0 {
				t.Errorf("unexpected records %+v", skips)
			}
		})
	}
}

// TestReloadUnchangedFileChangesNoHeapEntry reloads the same file, parsed
// again (new Job values, maps and zones): no entry is re-added or gets a
// new jittered instant, and nothing is fired or recorded.
func TestReloadUnchangedFileChangesNoHeapEntry(t *testing.T) {
	file := []string{
		"defaults: {timeout: 1m, jitter: 40s, env: {LEVEL: info}}",
		"jobs:",
		"  - {name: a, schedule: '*/5 * * * *', command: 'echo a', timezone: Europe/Berlin}",
		"  - {name: b, schedule: '@every 90s', command: [/bin/true], env: {X: '1'}}",
		"  - {name: c, schedule: '0 * * * *', command: 'echo c', enabled: false}",
		"  - {name: d, schedule: 'CRON_TZ=Asia/Tokyo 0 9 * * *', command: 'echo d', overlap: queue}",
	}
	jit := &halfJitter{}
	h := startHarness(t, at(11, 58, 0), parseJobs(t, file...), WithJitter(jit.roll))
	h.runUntil(at(12, 0, 10)) // a's 12:00 fire is pending (due 12:00:20)
	before, rolled := h.sched.NextFires(), jit.calls.Load()
	h.reload(parseJobs(t, file...))
	if n := jit.calls.Load() - rolled; n != 0 {
		t.Errorf("the reload rolled the jitter %d times", n)
	}
	after := h.sched.NextFires()
	if len(after) != len(before) {
		t.Fatalf("next fires %v after the reload, %v before", after, before)
	}
	for name, due := range before {
		if !after[name].Equal(due) {
			t.Errorf("%s: next fire %s after the reload, %s before", name, after[name], due)
		}
	}
	h.runUntil(at(12, 0, 20))
	if got := h.firedAt("a"); !slices.Equal(got, []string{"12:00:00"}) {
		t.Errorf("a fired %v, want its pending 12:00 fire", got)
	}
	for _, s := range h.rec.skips {
		if s.Job != "c" || s.Reason != "disabled" {
			t.Errorf("unexpected record %+v", s)
		}
	}
}

// TestReloadChangedJobPendingFire: a changed job whose fire is pending
// (slot passed, jittered start not yet) keeps it and runs it under the
// new definition while the new schedule still has that slot; otherwise
// the fire is recorded as not run. Never dropped without a record.
func TestReloadChangedJobPendingFire(t *testing.T) {
	job := func(schedule, jitter, extra string) []string {
		ls := []string{"jobs:", "  - name: hourly", "    schedule: '" + schedule + "'",
			"    command: [/bin/echo, " + extra + "]", "    timeout: 1m", "    jitter: " + jitter}
		if extra == "off" {
			ls = append(ls, "    enabled: false")
		}
		return ls
	}
	tests := []struct {
		name      string
		next      []string // the file after the edit; nil: the job is removed
		fireAt    time.Time
		wantFires []string
		wantArg   string // the new definition ran
		wantSkip  string
	}{
		{"command changed: runs at its instant, as edited", job("0 * * * *", "60s", "new"), at(12, 0, 30), []string{"12:00:00"}, "new", ""},
		{"schedule changed, slot kept", job("*/30 * * * *", "60s", "new"), at(12, 0, 30), []string{"12:00:00"}, "new", ""},
		{"jitter shortened: runs at once", job("0 * * * *", "10s", "new"), at(12, 0, 10), []string{"12:00:00"}, "new", ""},
		{"schedule without the slot: recorded", job("30 * * * *", "60s", "new"), at(12, 0, 30), nil, "", "not run: a reload changed the schedule"},
		{"disabled: recorded as such", job("0 * * * *", "60s", "off"), at(12, 0, 30), nil, "", "disabled"},
		{"removed: recorded", []string{"jobs: []"}, at(12, 0, 30), nil, "", "not run: a reload removed the job"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startHarness(t, at(11, 59, 0), parseJobs(t, job("0 * * * *", "60s", "old")...), WithJitter((&halfJitter{}).roll))
			h.runUntil(at(12, 0, 10))
			var next []config.Job
			if tc.next[0] != "jobs: []" {
				next = parseJobs(t, tc.next...)
			}
			h.reload(next)
			h.runUntil(tc.fireAt)
			if got := h.firedAt("hourly"); !slices.Equal(got, tc.wantFires) {
				t.Fatalf("fires %v, want %v", got, tc.wantFires)
			}
			if tc.wantArg != "" {
				if ran := h.rec.ran[0].Command; ran[1] != tc.wantArg {
					t.Errorf("ran %v, want the new definition (%s)", ran, tc.wantArg)
				}
			}
			skips := h.rec.skipsOf("hourly")
			if tc.wantSkip == "" {
				if len(skips) != 0 {
					t.Errorf("unexpected records %+v", skips)
				}
				return
			}
			if len(skips) != 1 || !strings.Contains(skips[0].Reason, tc.wantSkip) || !skips[0].Slot.Equal(at(12, 0, 0)) {
				t.Fatalf("records %+v, want one for slot 12:00 with %q", skips, tc.wantSkip)
			}
		})
	}
}

// TestSameDefinition checks what counts as a change: where a job is
// written does not, what it runs does.
func TestSameDefinition(t *testing.T) {
	base := parseJobs(t, hourlyJittered()...)[0]
	for _, tc := range []struct {
		name string
		file []string
		same bool
	}{
		{"moved down a line", hourlyJittered("  # moved"), true},
		{"value from defaults instead", append([]string{"defaults: {jitter: 60s}"}, hourlyJittered()[:6]...), true},
		{"other jitter", append(hourlyJittered()[:5], "    jitter: 30s"), false},
		{"other command", append(append(hourlyJittered()[:3], "    command: [/bin/false]"), hourlyJittered()[4:]...), false},
		{"other zone", append(hourlyJittered(), "    timezone: Europe/Berlin"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := parseJobs(t, tc.file...)
			if got := sameDefinition(base, jobs[len(jobs)-1]); got != tc.same {
				t.Errorf("sameDefinition = %v, want %v", got, tc.same)
			}
		})
	}
}
