package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no file makes Parse or Lint panic, and that what
// they return keeps its promises: positioned problems, a config exactly when
// there is no error, and complete jobs in it; and that cutting the jobs
// list into batches of one item (split.go) changes nothing.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"valid.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, src := range []string{
		"",
		y("a: b: c"),
		y("jobs:", "  - name: a", "    schedule: '@every 1m'", "    command: [echo, hi]", "    timeout: none"),
		y("defaults: {timeout: 1m, env: {A: 1}}", "jobs:", "  - {name: a, schedule: '0 9 * * 1-5', command: x, env: {B: 2}}"),
		y("x-a: &a {timeout: 1m}", "jobs:", "  - <<: [*a, *a]", "    name: b", "    schedule: '@daily'", "    command: x"),
		y("a: &x [*x]", "jobs: *x"),
		y("lock_backend: {type: redis, url: 'redis://${HOME}@h/0', ttl: 2s}", "history: {log_limit: 1GiB}"),
		y("jobs:", "  - name: a", "\tschedule: x"),
		y("jobs:", "  - {name: a, schedule: 'CRON_TZ=Europe/Berlin 30 2 * * *', command: x, timeout: 90}"),
		y("---", "jobs: []", "---", "jobs: []"),
		y("x-a: &a 1m", "jobs:", "- {name: a, schedule: '@hourly', command: x, timeout: *a}", "# c", "- name: b", "  schedule: &s '@daily'", "  command: *s", "history: {keep_runs: 3}"),
		y("jobs:", "  - name: a", "    command: \"x", "  - b\"", "  - name: c"),
	} {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parseBoth(t, data, 1, false)
		cfg, ps := Parse("/fuzz/jobs.yaml", data)
		for _, p := range ps {
			if p.Line < 1 || p.Col < 1 || p.Message == "" {
				t.Errorf("problem without position or message: %#v", p)
			}
		}
		if (cfg == nil) != HasErrors(ps) {
			t.Fatalf("config %v with problems:\n%s", cfg != nil, lines(ps))
		}
		if cfg == nil {
			return
		}
		for _, j := range cfg.Jobs {
			if j.Name == "" || j.Lock == "" || len(j.Command) == 0 || j.Sched == nil || j.Location == nil {
				t.Errorf("incomplete job in a valid config: %+v", j)
			}
		}
		Lint(cfg, mondayNoon())
	})
}
