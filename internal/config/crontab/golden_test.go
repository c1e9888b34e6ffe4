package crontab

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// homes is the user database of the golden tests.
func homes(user string) (string, bool) {
	h, ok := map[string]string{"": "/home/alice", "root": "/root", "www-data": "/var/www", "nobody": "/nonexistent"}[user]
	return h, ok
}

// TestGolden translates each testdata/*.crontab (system format when its
// name says so) and compares the jobs.yaml and the report with the golden
// files. The jobs.yaml must validate (for a root supervisor, whose file a
// system crontab becomes), and each job's next 20 fires must be those of
// its crontab line.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.crontab")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tab := Parse(string(text), strings.Contains(f, "system"))
			res := Translate(tab, Options{Home: homes})
			doc := Document(res, filepath.Base(f))
			report := Report(res.Problems)
			stem := strings.TrimSuffix(f, ".crontab")
			golden(t, stem+".yaml", doc)
			golden(t, stem+".report", []byte(report))
			cfg, ps := config.ParseAs(stem+".yaml", doc, 0, 0)
			if cfg == nil {
				t.Fatalf("the jobs.yaml does not validate:\n%v", ps)
			}
			if len(cfg.Jobs) != len(res.Jobs) {
				t.Fatalf("%d jobs in the file, %d translated", len(cfg.Jobs), len(res.Jobs))
			}
			sameFires(t, tab, res, cfg)
		})
	}
}

// sameFires checks each job's next 20 fires against its crontab line's
// schedule, read in the zone the crontab gave it (CRON_TZ) or UTC.
func sameFires(t *testing.T, tab *Tab, res Result, cfg *config.Config) {
	t.Helper()
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) // a month with a DST change in many zones
	for i, j := range res.Jobs {
		e := entryAt(tab, j.Line)
		loc := time.Local
		if tz, ok := lastVar(e.Env, "CRON_TZ"); ok {
			loc, _ = time.LoadLocation(tz)
		}
		orig, err := schedule.Parse(e.Schedule, loc)
		if err != nil {
			t.Fatalf("line %d: %v", e.Line, err)
		}
		got := schedule.NextN(cfg.Jobs[i].Sched, from, 20)
		want := schedule.NextN(orig, from, 20)
		if len(got) != 20 && !strings.Contains(e.Schedule, "31 2") {
			t.Errorf("line %d: %d fires", e.Line, len(got))
		}
		for k := range want {
			if k >= len(got) || !got[k].Equal(want[k]) {
				t.Errorf("line %d (%s): fire %d is %v, want %v", e.Line, e.Schedule, k, got, want)
				break
			}
		}
	}
}

func entryAt(tab *Tab, line int) Entry {
	for _, e := range tab.Entries {
		if e.Line == line {
			return e
		}
	}
	return Entry{}
}

func lastVar(vs []Var, name string) (string, bool) {
	val, ok := "", false
	for _, v := range vs {
		if v.Name == name {
			val, ok = v.Value, true
		}
	}
	return val, ok
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/config/crontab -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
