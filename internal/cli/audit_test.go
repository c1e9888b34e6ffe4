package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/store/history"
)

const auditFile = `state_dir: state
jobs:
  - {name: a, schedule: "*/10 * * * *", timezone: UTC, command: [/bin/true], timeout: 1m, retries: 2}
  - {name: b, schedule: "@every 1h", command: [/bin/true], timeout: 1m, enabled: false}
`

// auditNow is the time the audit of the test runs at.
const auditNowUnix = 1780309830 // 2026-06-01T10:30:30Z

func auditNow() time.Time { return time.Unix(auditNowUnix, 0).UTC() }

func hm(h, m int) time.Time { return time.Date(2026, 6, 1, h, m, 0, 0, time.UTC) }

// writeAuditHistory writes the records of the test through history's
// Writer, as a daemon does, and one run of another host into the store.
func writeAuditHistory(t *testing.T, stateDir string) {
	t.Helper()
	store, err := history.Open(statedir.Dir(stateDir).History())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	w := history.NewWriter(history.WriterConfig{Store: store, StateDir: stateDir})
	ran := func(id string, slot time.Time, attempt int, o run.Outcome, manual bool) {
		w.Started(run.Start{Job: "a", RunID: id, Slot: slot, Started: slot.Add(time.Second), PID: 10, Attempt: attempt, Manual: manual})
		if _, err := w.WriteEnd(context.Background(), run.End{Job: "a", RunID: id, Slot: slot, Started: slot.Add(time.Second), Ended: slot.Add(2 * time.Second),
			Outcome: o, Attempt: attempt, Manual: manual}); err != nil {
			t.Fatal(err)
		}
	}
	w.WriteSkip(run.Skip{Job: "b", RunID: "b0", Slot: hm(9, 0), Time: hm(9, 0), Reason: "disabled", Class: run.ClassDisabled})
	ran("a1", hm(9, 40), 1, run.Failed, false)
	ran("a1r", hm(9, 40), 2, run.OK, false)
	w.WriteSkip(run.Skip{Job: "a", RunID: "a2", Slot: hm(9, 50), Time: hm(9, 50), Reason: "lock held by pid 7@elsewhere (job a, run x)", Class: run.ClassLockHeld})
	w.WriteSkip(run.Skip{Job: "a", RunID: "a3", Slot: hm(10, 0), Time: hm(10, 11),
		Reason: "missed while down (beyond catch_up 0s) (2 fires from 2026-06-01T10:00:00Z)", Class: run.ClassMissed})
	ran("a4", hm(10, 20), 1, run.OK, false)
	ran("m1", hm(10, 30), 1, run.OK, true) // manual: no slot's run
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	other := run.Record{Job: "a", RunID: "a4b", Outcome: run.OK, ScheduledAt: hm(10, 20), StartedAt: hm(10, 20),
		EndedAt: hm(10, 21), Host: "host-b", Attempt: 1}
	if err := store.Finish(context.Background(), other); err != nil {
		t.Fatal(err)
	}
}

// runAuditAt runs the audit at auditNow and returns its exit code and output.
func runAuditAt(t *testing.T, path string, f auditFlags) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globals{configPath: path, stdout: &out, stderr: &errb}
	err := auditAt(g, f, auditNow())
	var ee *ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		if ee.Err != nil {
			errb.WriteString(ee.Err.Error())
		}
		return ee.Code, out.String(), errb.String()
	}
	t.Fatalf("audit: %v", err)
	return 0, "", ""
}

func TestAuditCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jobs.yaml")
	if err := os.WriteFile(path, []byte(auditFile), 0o644); err != nil {
		t.Fatal(err)
	}
	writeAuditHistory(t, filepath.Join(dir, "state"))
	tests := []struct {
		name  string
		flags auditFlags
		code  int
		out   []string // lines of stdout, in order
		err   string   // a part of stderr
	}{
		{"text", auditFlags{since: "1h"}, 1, []string{
			"JOB  SLOT                  CLASS       HOST           REASON",
			"a    2026-06-01T10:00:00Z  missed      -              missed while down (beyond catch_up 0s) (2 fires from 2026-06-01T10:00:00Z)",
			"a    2026-06-01T10:10:00Z  missed      -              missed while down (beyond catch_up 0s) (2 fires from 2026-06-01T10:00:00Z)",
			"a    2026-06-01T10:20:00Z  duplicated  {hosts}  2 runs of one slot: a4b on host-b (ok), a4 on {host} (ok)",
			"a    2026-06-01T10:30:00Z  open        -              no record yet: the fire may still come (within the job's jitter and the grace)",
			"",
			"a: ran 1, skipped 1, missed 2, duplicated 1, open 1",
			"b: ran 0, skipped 1, missed 0, duplicated 0, open 0",
			"ran 1, skipped 2, missed 2, duplicated 1, open 1",
		}, ""},
		{"one job", auditFlags{since: "1h", job: "b"}, 0, []string{
			"b: ran 0, skipped 1, missed 0, duplicated 0, open 0",
			"ran 0, skipped 1, missed 0, duplicated 0, open 0",
		}, ""},
		{"clipped to the history's start", auditFlags{since: "1d", job: "b"}, 0, []string{
			"b: ran 0, skipped 2, missed 0, duplicated 0, open 0",
			"ran 0, skipped 2, missed 0, duplicated 0, open 0",
		}, "the history begins 2026-06-01T09:00:00Z"},
	}
	host, _ := os.Hostname()
	hosts := host + ",host-b"
	if host > "host-b" {
		hosts = "host-b," + host
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runAuditAt(t, path, tc.flags)
			got := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if code != tc.code || len(got) != len(tc.out) || !strings.Contains(errOut, tc.err) {
				t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant exit %d, %d lines, stderr with %q", code, errOut, out, tc.code, len(tc.out), tc.err)
			}
			for i, want := range tc.out {
				want = strings.NewReplacer("{hosts}", hosts, "{host}", host).Replace(want)
				if !wideMatch(got[i], want) {
					t.Errorf("line %d: %q, want %q", i+1, got[i], want)
				}
			}
		})
	}
}

// wideMatch compares lines whose column widths depend on the host's name:
// the same words in the same order, got's last ones only if want has them.
func wideMatch(got, want string) bool {
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) < len(w) {
		return false
	}
	for i := range w {
		if g[i] != w[i] {
			return false
		}
	}
	return len(w) > 0 || len(g) == 0
}

// TestAuditCommandJSON: one object per slot with the contract's fields,
// the summary on stderr.
func TestAuditCommandJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jobs.yaml")
	if err := os.WriteFile(path, []byte(auditFile), 0o644); err != nil {
		t.Fatal(err)
	}
	writeAuditHistory(t, filepath.Join(dir, "state"))
	code, out, errOut := runAuditAt(t, path, auditFlags{since: "1h", job: "a", asJSON: true})
	if code != 1 || strings.TrimSpace(errOut) != "ran 1, skipped 1, missed 2, duplicated 1, open 1" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if len(m) != 9 {
			t.Errorf("line %q: %d fields, want job, slot, class, host, outcome, attempts, copies, reason, run_ids", l, len(m))
		}
		got = append(got, strings.Join([]string{m["slot"].(string), m["class"].(string), m["outcome"].(string),
			jsonText(m["attempts"]), jsonText(m["copies"]), jsonText(m["run_ids"])}, " "))
	}
	want := []string{
		`2026-06-01T09:40:00Z ran ok 2 1 ["a1","a1r"]`,
		`2026-06-01T09:50:00Z skipped  0 0 ["a2"]`,
		`2026-06-01T10:00:00Z missed  0 0 ["a3"]`,
		`2026-06-01T10:10:00Z missed  0 0 ["a3"]`,
		`2026-06-01T10:20:00Z duplicated  1 2 ["a4b","a4"]`,
		`2026-06-01T10:30:00Z open  0 0 []`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAuditCommandUsage: the usage errors exit 2 as the other commands'
// do; no history yet is no failure.
func TestAuditCommandUsage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jobs.yaml")
	if err := os.WriteFile(path, []byte(auditFile), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"unknown job", []string{"--job", "aa"}, 2, `no job "aa" in ` + path + "; did you mean"},
		{"bad since", []string{"--since", "3"}, 2, `--since "3": not a duration`},
		{"zero since", []string{"--since", "0s"}, 2, "must be more than 0"},
		{"an argument", []string{"a"}, 2, `unexpected argument "a"`},
		{"no history yet", nil, 0, "no history yet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Execute(append([]string{"--config", path, "audit"}, tc.args...), &out, &errb)
			if code != tc.code || !strings.Contains(errb.String(), tc.err) {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr with %q", code, errb.String(), tc.code, tc.err)
			}
		})
	}
}

// TestAuditCompletesJobs: --job completes the names of jobs.yaml's jobs.
func TestAuditCompletesJobs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.yaml")
	if err := os.WriteFile(path, []byte(auditFile), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Execute([]string{"--config", path, "__complete", "audit", "--job", ""}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got := strings.Fields(out.String()); len(got) < 3 || got[0] != "a" || got[1] != "b" {
		t.Errorf("completions %q, want a, b and the directive", got)
	}
}
