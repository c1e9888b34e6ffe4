package cli

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/store/history"
)

var updatePlan = flag.Bool("update-plan", false, "rewrite testdata/plan.json")

// planFile has sync every 5 minutes, whose recorded runs take 7 minutes.
const planFile = `state_dir: state
defaults:
  timeout: 1h
jobs:
  - name: sync
    schedule: '*/5 * * * *'
    timezone: UTC
    command: [/bin/true]
  - name: nightly
    schedule: '30 2 * * *'
    timezone: Europe/Berlin
    command: [/bin/true]
`

// planLayout writes planFile and n ok runs of sync of 7 minutes each.
func planLayout(t *testing.T, n int) (config string) {
	t.Helper()
	dir := t.TempDir()
	config = filepath.Join(dir, "jobs.yaml")
	if err := os.WriteFile(config, []byte(planFile), 0o600); err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(dir, "state")
	store, err := history.Open(statedir.Dir(stateDir).History())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	w := history.NewWriter(history.WriterConfig{Store: store, StateDir: stateDir})
	first := time.Now().Add(-24 * time.Hour).Truncate(time.Hour)
	for i := range n {
		slot := first.Add(time.Duration(i) * 10 * time.Minute)
		id := run.NewID(slot)
		w.Started(run.Start{Job: "sync", RunID: id, Slot: slot, Started: slot, PID: 10, Attempt: 1})
		if _, err := w.WriteEnd(context.Background(), run.End{Job: "sync", RunID: id, Slot: slot, Started: slot,
			Ended: slot.Add(7 * time.Minute), Outcome: run.OK, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return config
}

// TestPlanPredictsFromHistory: with 20 runs of 7 minutes, plan predicts
// a skip every other fire of the 5-minute job and says why; on Berlin's
// spring-forward day it names the edge and the slot it moves; --json is
// held to testdata/plan.json.
func TestPlanPredictsFromHistory(t *testing.T) {
	config := planLayout(t, 20)
	args := []string{"--config", config, "plan", "--from", "2027-03-27T12:00:00Z", "--window", "24h"}
	code, out, errOut := executeOut(t, args)
	if code != 0 {
		t.Fatalf("plan exited %d: %s", code, errOut)
	}
	for _, want := range []string{
		"sync     288    2027-03-27 12:00:00 UTC   5m0s    7m0s (20)   144 runs, 144 skipped",
		"  ! a skip every other fire (144 of 288 skipped): runs take 7m0s (p95 of 20) and fires come every 5m0s; overlap: skip",
		"  ! spring forward at 2027-03-28 03:00 CEST: 02:30 does not exist on 2027-03-28 in Europe/Berlin; runs at 03:00 instead",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("plan printed\n%s\nwant the line %q", out, want)
		}
	}
	code, js, errOut := executeOut(t, append(args[:len(args)-2], "--window", "1h", "--json"))
	if code != 0 {
		t.Fatalf("plan --json exited %d: %s", code, errOut)
	}
	js = strings.ReplaceAll(js, config, "JOBS.YAML")
	golden := filepath.Join("testdata", "plan.json")
	if *updatePlan {
		if err := os.WriteFile(golden, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if js != string(want) {
		t.Errorf("plan --json differs from %s (go test -run TestPlanPredictsFromHistory ./internal/cli/ -update-plan):\n%s", golden, js)
	}
}

// TestDiffOfAStepAndACatchUp: */10 to */5 adds 144 slots in a day; a
// catch_up raised to 2h says what a start-up would run at once, and
// that the reload itself runs nothing.
func TestDiffOfAStepAndACatchUp(t *testing.T) {
	config := planLayout(t, 0)
	dir := filepath.Dir(config)
	oldFile, newFile := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml")
	old := strings.Replace(planFile, "*/5", "*/10", 1)
	changed := strings.Replace(planFile, "    timezone: UTC\n", "    timezone: UTC\n    catch_up: 2h\n", 1)
	for f, text := range map[string]string{oldFile: old, newFile: changed} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := executeOut(t, []string{"diff", oldFile, newFile, "--from", "2026-12-04T10:07:00Z"})
	if code != 0 {
		t.Fatalf("diff exited %d: %s", code, errOut)
	}
	want := `sync (changed)
  schedule: */10 * * * * → */5 * * * *
  catch_up: 0s → 2h0m0s
  slots: +144 -0 (first added 2026-12-04 10:15:00 UTC)
  at reload: nothing: a reload never catches up; the job's next fire is computed from now
  at start-up: catch_up 0s → 2h0m0s: a start-up now would run the slot 2026-12-04T10:05:00Z (2m0s ago) at once if no host ran it; the reload itself does not
  ! catch_up 2h0m0s is longer than the period (5m0s): after downtime only the newest missed slot runs (up to 2h0m0s old), the others are recorded missed
1 job changed, 0 added, 0 removed; +144 -0 slots in 24h; fires at reload: none
`
	if out != want {
		t.Errorf("diff printed\n%s\nwant\n%s", out, want)
	}
}

// TestPlanningDocExamples runs the commands of docs/planning.md's
// console blocks on the files of its yaml blocks (```yaml FILE) and
// holds their output to what the page shows.
func TestPlanningDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/planning.md")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CRONVISOR_CONFIG", "")
	t.Chdir(t.TempDir())
	blocks := strings.Split(string(doc), "```")
	ran := 0
	for i := 1; i < len(blocks); i += 2 {
		info, body, _ := strings.Cut(blocks[i], "\n")
		switch {
		case strings.HasPrefix(info, "yaml "):
			if err := os.WriteFile(strings.TrimPrefix(info, "yaml "), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		case info == "console":
			cmd, want, _ := strings.Cut(body, "\n")
			args := strings.Fields(strings.TrimPrefix(cmd, "$ cronvisor "))
			code, out, errOut := executeOut(t, args)
			if code != 0 || out != want {
				t.Errorf("docs/planning.md: %s exited %d (%s), printed\n%s\nthe page shows\n%s", cmd, code, errOut, out, want)
			}
			ran++
		}
	}
	if ran < 2 {
		t.Fatalf("ran %d console blocks of docs/planning.md, want at least 2", ran)
	}
}
