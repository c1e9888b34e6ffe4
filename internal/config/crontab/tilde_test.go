package crontab

import (
	"slices"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/config"
)

// TestImportCarriesTilde checks that cronie's ~ imports as written, with a
// note on how its draw differs, and that the jobs.yaml validates and draws
// each job's value from its name.
func TestImportCarriesTilde(t *testing.T) {
	const tab = "0~30 2 * * * /usr/bin/backup\n~ ~ * * 1~5 /usr/bin/report\n15 3 * * * /usr/bin/plain\n"
	res := Translate(Parse(tab, false), Options{Home: homes})
	if len(res.Problems) != 0 || len(res.Jobs) != 3 {
		t.Fatalf("%d jobs, problems %v", len(res.Jobs), res.Problems)
	}
	for i, want := range []string{"0~30 2 * * *", "~ ~ * * 1~5", "15 3 * * *"} {
		j := res.Jobs[i]
		if j.Schedule != want {
			t.Errorf("job %d: schedule %q, want %q as written", i, j.Schedule, want)
		}
		if has := slices.Contains(j.Notes, tildeNote); has != strings.Contains(want, "~") {
			t.Errorf("job %d (%s): notes %q", i, want, j.Notes)
		}
	}
	doc := Document(res, "user.crontab")
	if !strings.Contains(string(doc), "cronie draws ~ at random") {
		t.Errorf("the jobs.yaml does not carry the note:\n%s", doc)
	}
	cfg, ps := config.ParseAs("jobs.yaml", doc, 0, 0)
	if cfg == nil || len(config.Errors(ps)) != 0 {
		t.Fatalf("the jobs.yaml does not validate: %v\n%s", ps, doc)
	}
	fire := cfg.Jobs[0].Sched.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, cfg.Jobs[0].Location))
	if fire.Hour() != 2 || fire.Minute() > 30 {
		t.Errorf("0~30 2 * * * fires at %s", fire)
	}
}
