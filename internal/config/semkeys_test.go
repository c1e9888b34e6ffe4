package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// semFile is a file declaring db (2 slots) and disk (1) with one job a
// whose last lines are extra, from line 8 on.
func semFile(extra ...string) string {
	return y(append([]string{"resources:", "  db: 2", "  disk: 1", "jobs:", "  - name: a",
		"    schedule: '@hourly'", "    command: x    # line 7", "    timeout: 1m"}, extra...)...)
}

// TestResourceErrors expects exactly one error per file, at the node at
// fault, naming what is wrong.
func TestResourceErrors(t *testing.T) {
	cases := []struct {
		name, src, at, msg string
	}{
		{"resources a list", y("resources: [db]", "jobs: []"), "1:12", "resources: expected a mapping"},
		{"bad resource name", y("resources:", "  'd b': 1", "jobs: []"), "2:3", `resources: name "d b" may contain only letters, digits, _ . and -`},
		{"zero slots", y("resources:", "  db: 0", "jobs: []"), "2:7", "resources: db: 0 is outside 1..1000"},
		{"too many slots", y("resources:", "  db: 1001", "jobs: []"), "2:7", "resources: db: 1001 is outside 1..1000"},
		{"slots a word", y("resources:", "  db: two", "jobs: []"), "2:7", "resources: db: expected a whole number from 1 to 1000"},
		{"undeclared", semFile("    uses: [dbx]"), "9:12", `uses: resource "dbx" is not declared under resources:`},
		{"undeclared without resources", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    uses: [db]"), "6:12", `uses: resource "db" is not declared under resources:`},
		{"listed twice", semFile("    uses: [db, db]"), "9:16", "uses: db is listed twice"},
		{"weight above size", semFile("    uses: {db: 3}"), "9:16", "uses: db: weight 3 is above its 2 slots"},
		{"weight zero", semFile("    uses: {db: 0}"), "9:16", "uses: db: weight 0 is below 1"},
		{"weight a word", semFile("    uses: {db: all}"), "9:16", "uses: db: expected a weight"},
		{"uses a word", semFile("    uses: db"), "9:11", "uses: expected a list of resources"},
		{"bad on_full", semFile("    on_full: block"), "9:14", `on_full: "block" is not one of skip, wait`},
		{"zero max_wait", semFile("    on_full: wait", "    max_wait: 0s"), "10:15", "max_wait: must be above 0"},
		{"max_wait without wait", semFile("    max_wait: 5m"), "9:15", "max_wait: is used only with on_full: wait"},
		{"max_wait with skip", semFile("    on_full: skip", "    max_wait: 5m"), "10:15", "max_wait: is used only with on_full: wait"},
		{"undeclared in defaults", y("resources: {db: 1}", "defaults:", "  uses: [disk]", "jobs: []"), "3:10", `uses: resource "disk" is not declared`},
		{"uses at top", y("resources: {db: 1}", "uses: [db]", "jobs: []"), "2:1", "put it under defaults"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ps := Parse("jobs.yaml", []byte(tc.src))
			errs := Errors(ps)
			if len(errs) != 1 {
				t.Fatalf("want one error, got %q", ps)
			}
			if got := at(errs[0]); got != tc.at || !strings.Contains(errs[0].Message, tc.msg) {
				t.Errorf("got %s, want at %s: ...%s...", errs[0], tc.at, tc.msg)
			}
			if !strings.HasPrefix(errs[0].String(), "jobs.yaml:"+tc.at+": ") {
				t.Errorf("%q does not name file:line:col", errs[0].String())
			}
			if cfg != nil {
				t.Errorf("a file with an error gave a config")
			}
		})
	}
}

// TestResourcesDecode checks what a valid file gives: sizes, uses sorted
// by name with their weights, on_full, max_wait and its default, and
// defaults applying to jobs that are silent.
func TestResourcesDecode(t *testing.T) {
	src := y("resources:", "  db: 2", "  backup_disk: 1",
		"defaults:", "  max_wait: 5m",
		"jobs:",
		"  - {name: a, schedule: '@hourly', command: x, timeout: 1m, uses: [db, backup_disk]}",
		"  - {name: b, schedule: '@hourly', command: x, timeout: 1m, uses: {db: 2}, on_full: wait}",
		"  - {name: c, schedule: '@hourly', command: x, timeout: 1m, uses: [db], on_full: wait, max_wait: 10s}",
		"  - {name: d, schedule: '@hourly', command: x, timeout: 1m}")
	cfg, ps := Parse("/nonexistent/jobs.yaml", []byte(src))
	if HasErrors(ps) {
		t.Fatalf("%q", ps)
	}
	if cfg.Resources["db"] != 2 || cfg.Resources["backup_disk"] != 1 || len(cfg.Resources) != 2 {
		t.Errorf("resources %v", cfg.Resources)
	}
	want := []struct {
		uses    []Use
		onFull  OnFull
		maxWait time.Duration
	}{
		{[]Use{{"backup_disk", 1}, {"db", 1}}, "", 0},
		{[]Use{{"db", 2}}, OnFullWait, 5 * time.Minute},
		{[]Use{{"db", 1}}, OnFullWait, 10 * time.Second},
		{nil, "", 0},
	}
	for i, w := range want {
		j := cfg.Jobs[i]
		if !slices.Equal(j.Uses, w.uses) || j.OnFull == OnFullWait != (w.onFull == OnFullWait) || j.MaxWait != w.maxWait {
			t.Errorf("job %s: uses %v on_full %q max_wait %v, want %v %q %v", j.Name, j.Uses, j.OnFull, j.MaxWait, w.uses, w.onFull, w.maxWait)
		}
	}
	cfg, ps = Parse("/nonexistent/jobs.yaml", []byte(y("resources: {db: 1}", "jobs:",
		"  - {name: a, schedule: '@hourly', command: x, timeout: 1m, on_full: wait}")))
	if HasErrors(ps) || cfg.Jobs[0].MaxWait != DefaultMaxWait {
		t.Errorf("on_full: wait alone: %q, max_wait %v, want %v", ps, cfg.Jobs[0].MaxWait, DefaultMaxWait)
	}
}

// TestUnusedResource: a resource no job uses is a warning at its name.
func TestUnusedResource(t *testing.T) {
	cfg, ps := Parse("jobs.yaml", []byte(y("resources:", "  db: 1", "  disk: 1", "jobs:",
		"  - {name: a, schedule: '@hourly', command: x, timeout: 1m, uses: [db]}")))
	if cfg == nil || len(ps) != 1 || !ps[0].Warning || at(ps[0]) != "3:3" || ps[0].Message != "resources: disk is used by no job" {
		t.Errorf("problems %q, want one warning at 3:3 about disk", ps)
	}
}
