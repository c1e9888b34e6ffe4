package config

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestLoadValid loads the bundled-style file and checks every field,
// defaults included.
func TestLoadValid(t *testing.T) {
	t.Setenv("CRONVISOR_TEST_REDIS_PASSWORD", "s3cret")
	path := filepath.Join("testdata", "valid.yaml")
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	cfg, ps := Load(path)
	if cfg == nil || len(ps) != 0 {
		t.Fatalf("Load: cfg=%v problems:\n%s", cfg, lines(ps))
	}
	wantTop := Config{
		Path:          path,
		StateDir:      filepath.Join(dir, "state"),
		ShutdownGrace: 45 * time.Second,
		LockBackend: LockBackend{Type: "redis", URL: "redis://:s3cret@127.0.0.1:6379/2",
			TTL: 20 * time.Second, Line: 4, Col: 1},
		History:    HistoryPolicy{KeepRuns: 50, KeepAge: 168 * time.Hour, LogLimit: 512 << 10},
		SecretEnv:  []string{"CRONVISOR_TEST_REDIS_PASSWORD"},
		Source:     Source{StateDir: Pos{2, 12}},
		Durability: run.DurabilityMachine,
	}
	gotTop := *cfg
	gotTop.Jobs, gotTop.Source.Jobs = nil, nil
	if data, err := os.ReadFile(path); err != nil || !bytes.Equal(gotTop.Text, data) {
		t.Errorf("config's Text is not the file's bytes")
	}
	gotTop.Text = nil
	if !reflect.DeepEqual(gotTop, wantTop) {
		t.Errorf("config:\ngot  %+v\nwant %+v", gotTop, wantTop)
	}

	common := map[string]string{"TZ": "UTC", "LEVEL": "info"}
	want := []Job{{
		Name: "sync_orders", Schedule: "*/5 * * * *", Timezone: "Asia/Shanghai",
		Command: []string{"/bin/bash", "-c", "php /var/www/app/cron/sync_orders.php"},
		Shell:   "/bin/bash", Dir: "/var/www/app",
		Env:     map[string]string{"TZ": "UTC", "LEVEL": "debug", "APP_ENV": "production", "PORT": "8080"},
		Timeout: 90 * time.Second, KillGrace: 5 * time.Second, Overlap: OverlapSkip, Lock: "orders",
		Jitter: 10 * time.Second, CatchUp: time.Hour, Enabled: true, OnLockLost: LockLostEnd, LogOutput: true,
		RetryBackoff: DefaultRetryBackoff, RetryBackoffMax: DefaultRetryBackoffMax, RetryOn: DefaultRetryOn,
	}, {
		Name: "report.weekly", Schedule: "@weekly",
		Command: []string{"/usr/bin/env", "report", "--weekly", ""},
		Shell:   "/bin/bash", Dir: filepath.Join(dir, "reports"), Env: common,
		Timeout: 0, KillGrace: DefaultKillGrace, Overlap: OverlapQueue, Lock: "report.weekly",
		Enabled: false, OnLockLost: LockLostEnd,
		RetryBackoff: DefaultRetryBackoff, RetryBackoffMax: DefaultRetryBackoffMax, RetryOn: DefaultRetryOn,
	}, {
		Name: "vacuum-db", Schedule: "30 2 * * *", Timezone: "Europe/Berlin",
		Command: []string{"/bin/bash", "-c", "vacuumdb --all"},
		Shell:   "/bin/bash", Dir: dir, Env: common,
		Timeout: 10 * time.Minute, KillGrace: DefaultKillGrace, Overlap: OverlapQueue, Lock: "vacuum-db",
		Enabled: true, OnLockLost: LockLostEnd, LogOutput: true,
		RetryBackoff: DefaultRetryBackoff, RetryBackoffMax: DefaultRetryBackoffMax, RetryOn: DefaultRetryOn,
	}}
	wantZone := []string{"Asia/Shanghai", "Local", "Europe/Berlin"}
	wantLine := []int{23, 36, 43} // each job's mapping, at column 5
	wantPos := []map[string]Pos{
		{"schedule": {24, 15}, "timeout": {29, 14}, "overlap": {31, 14}},
		{"timeout": {40, 14}, "overlap": {17, 12}, "shell": {18, 10}},
		{"schedule": {13, 13}, "timezone": {14, 13}, "timeout": {16, 12}},
	}
	// A fire each schedule must produce, as a check that Sched was parsed
	// in the job's zone.
	from := time.Date(2025, 3, 1, 0, 1, 0, 0, time.UTC)
	wantNext := []time.Time{
		time.Date(2025, 3, 1, 8, 5, 0, 0, mustZone(t, "Asia/Shanghai")),
		{}, // @weekly in the machine's zone: checked for non-nil only
		time.Date(2025, 3, 1, 2, 30, 0, 0, mustZone(t, "Europe/Berlin")),
	}
	if len(cfg.Jobs) != len(want) {
		t.Fatalf("got %d jobs, want %d", len(cfg.Jobs), len(want))
	}
	for i, got := range cfg.Jobs {
		t.Run(want[i].Name, func(t *testing.T) {
			if got.Location == nil || got.Location.String() != wantZone[i] {
				t.Errorf("Location = %v, want %s", got.Location, wantZone[i])
			}
			if got.Sched == nil {
				t.Fatal("Sched is nil")
			}
			if next := got.Sched.Next(from); !wantNext[i].IsZero() && !next.Equal(wantNext[i]) {
				t.Errorf("Sched.Next(%v) = %v, want %v", from, next, wantNext[i])
			}
			src := cfg.JobSource(i)
			if want := (Pos{wantLine[i], 5}); src.Pos != want || src.At("no_such_key") != want {
				t.Errorf("job at %v (unwritten key at %v), want %v", src.Pos, src.At("no_such_key"), want)
			}
			for k, p := range wantPos[i] {
				if src.At(k) != p {
					t.Errorf("At(%q) = %v, want %v", k, src.At(k), p)
				}
			}
			got.Location, got.Sched = nil, nil
			if !reflect.DeepEqual(got, want[i]) {
				t.Errorf("job:\ngot  %+v\nwant %+v", got, want[i])
			}
		})
	}
}

// TestParseDefaults checks what a minimal file gets without saying so.
func TestParseDefaults(t *testing.T) {
	path := "/srv/cron/jobs.yaml"
	cfg, ps := Parse(path, []byte(y("jobs:", "  - {name: a, schedule: '@hourly', command: 'echo hi', timeout: 1m}")))
	if cfg == nil || len(ps) != 0 {
		t.Fatalf("Parse: problems:\n%s", lines(ps))
	}
	wantTop := Config{
		Path: path, StateDir: "/srv/cron/.cronvisor", ShutdownGrace: 30 * time.Second,
		LockBackend: LockBackend{Type: BackendFile, TTL: 30 * time.Second},
		History:     HistoryPolicy{KeepRuns: 1000, KeepAge: 720 * time.Hour, LogLimit: 1 << 20},
		Durability:  run.DurabilityMachine,
	}
	gotTop := *cfg
	gotTop.Jobs, gotTop.Source.Jobs = nil, nil
	if !reflect.DeepEqual(gotTop, wantTop) {
		t.Errorf("config:\ngot  %+v\nwant %+v", gotTop, wantTop)
	}
	got := cfg.Jobs[0]
	got.Sched = nil
	if src := cfg.JobSource(0); src.Pos != (Pos{2, 5}) {
		t.Errorf("job at %v, want 2:5", src.Pos)
	}
	want := Job{
		Name: "a", Schedule: "@hourly", Location: time.Local,
		Command: []string{"/bin/sh", "-c", "echo hi"}, Shell: "/bin/sh", Dir: "/srv/cron",
		Timeout: time.Minute, KillGrace: 10 * time.Second, Overlap: OverlapSkip, Lock: "a",
		Enabled: true, OnLockLost: LockLostEnd, LogOutput: true,
		RetryBackoff: DefaultRetryBackoff, RetryBackoffMax: DefaultRetryBackoffMax, RetryOn: DefaultRetryOn,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("job:\ngot  %+v\nwant %+v", got, want)
	}
}

// TestParseWarnings checks files that are valid but say something odd: the
// config comes back together with the warnings.
func TestParseWarnings(t *testing.T) {
	cases := []struct {
		name, src, at, msg string
	}{
		{"empty file", "", "1:1", "the file is empty"},
		{"comments only", y("# nothing yet"), "1:1", "the file is empty"},
		{"empty jobs", y("jobs: []"), "1:1", "jobs is empty"},
		{"null jobs", y("state_dir: s", "jobs:"), "2:1", "jobs is empty"},
		{"no jobs key", y("state_dir: s"), "1:1", "no jobs key"},
		{"shell with argv", y("jobs:", "  - {name: a, schedule: '@hourly', command: [echo], shell: /bin/bash, timeout: 1m}"),
			"2:53", "shell is not used"},
		{"lock with allow", y("jobs:", "  - {name: a, schedule: '@hourly', command: x, overlap: allow, lock: l, timeout: 1m}"),
			"2:64", "lock is not used"},
		{"url with file", y("lock_backend: {type: file, url: 'redis://h/0'}", "jobs:", "  - {name: a, schedule: '@hourly', command: x, timeout: 1m}"),
			"1:28", "not used by the file backend"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ps := Parse("jobs.yaml", []byte(tc.src))
			if cfg == nil {
				t.Fatalf("Parse refused a valid file:\n%s", lines(ps))
			}
			if len(ps) != 1 || !ps[0].Warning || at(ps[0]) != tc.at || !strings.Contains(ps[0].Message, tc.msg) {
				t.Errorf("got:\n%swant one warning at %s: ...%s...", lines(ps), tc.at, tc.msg)
			}
		})
	}
}

// TestParseYAMLFeatures checks anchors, merges and x- keys, which operators
// use to share settings between jobs.
func TestParseYAMLFeatures(t *testing.T) {
	src := y(
		"x-base: &base",
		"  schedule: '@hourly'",
		"  timeout: 1m",
		"  env: &env {A: '1'}",
		"x-slow: &slow {timeout: 1h, overlap: queue}",
		"jobs:",
		"  - <<: [*slow, *base]", // earlier source wins: timeout 1h
		"    name: a",
		"    command: x",
		"  - <<: *base",
		"    name: b",
		"    command: y",
		"    timeout: 5m", // written key wins over merged
		"    env: *env",
	)
	cfg, ps := Parse("jobs.yaml", []byte(src))
	if cfg == nil || len(ps) != 0 {
		t.Fatalf("Parse: problems:\n%s", lines(ps))
	}
	cases := []struct {
		job     int
		timeout time.Duration
		overlap Overlap
		env     map[string]string
	}{
		{0, time.Hour, OverlapQueue, map[string]string{"A": "1"}},
		{1, 5 * time.Minute, OverlapSkip, map[string]string{"A": "1"}},
	}
	for _, tc := range cases {
		j := cfg.Jobs[tc.job]
		t.Run(j.Name, func(t *testing.T) {
			if j.Timeout != tc.timeout || j.Overlap != tc.overlap || !reflect.DeepEqual(j.Env, tc.env) {
				t.Errorf("got timeout %v overlap %v env %v, want %v %v %v", j.Timeout, j.Overlap, j.Env, tc.timeout, tc.overlap, tc.env)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "jobs.yaml")
	if err := os.WriteFile(bad, []byte(y("jobs:", "  - name: a")), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, want string
	}{
		{"missing file", filepath.Join(dir, "nope.yaml"), filepath.Join(dir, "nope.yaml") + ": cannot read: no such file or directory"},
		{"directory", dir, dir + ": cannot read: is a directory"},
		{"invalid file", bad, bad + `:2:5: job "a" has no schedule`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ps := Load(tc.path)
			if cfg != nil || len(ps) == 0 || ps[0].String() != tc.want {
				t.Errorf("got cfg=%v problems:\n%swant first: %s", cfg, lines(ps), tc.want)
			}
		})
	}
}

func TestProblemString(t *testing.T) {
	cases := []struct {
		name string
		p    Problem
		want string
	}{
		{"error", Problem{Path: "jobs.yaml", Line: 3, Col: 7, Message: "bad"}, "jobs.yaml:3:7: bad"},
		{"warning", Problem{Path: "j.yaml", Line: 1, Col: 1, Message: "odd", Warning: true}, "j.yaml:1:1: warning: odd"},
		{"no position", Problem{Path: "j.yaml", Message: "cannot read"}, "j.yaml: cannot read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReport(t *testing.T) {
	ps := []Problem{
		{Path: "j.yaml", Line: 1, Col: 2, Message: "one"},
		{Path: "j.yaml", Line: 3, Col: 4, Message: "two", Warning: true},
	}
	if got, want := lines(ps), "j.yaml:1:2: one\nj.yaml:3:4: warning: two\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := Errors(ps); len(got) != 1 || got[0].Message != "one" {
		t.Errorf("Errors = %v, want only the first", got)
	}
}

func TestSuggest(t *testing.T) {
	cases := []struct{ key, want string }{
		{"timout", "timeout"},
		{"tiemout", "timeout"},
		{"Schedule", "schedule"},
		{"catchup", "catch_up"},
		{"working_dir", "dir"},
		{"cmd", "command"},
		{"dirr", "dir"},
		{"zzz", ""},
		{"uesr", "user"},
		{"nicee", "nice"},
		{"nofiles", "nofile"},
		{"quux", ""},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			got := suggest(tc.key, jobKeys)
			want := ""
			if tc.want != "" {
				want = ` (did you mean "` + tc.want + `"?)`
			}
			if got != want {
				t.Errorf("suggest(%q) = %q, want %q", tc.key, got, tc.want)
			}
		})
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestLogOutputFromDefaults checks that log_output in defaults applies to
// the jobs that do not set it.
func TestLogOutputFromDefaults(t *testing.T) {
	cfg, ps := Parse("/srv/jobs.yaml", []byte(y("defaults:", "  log_output: false", "jobs:",
		"  - {name: quiet, schedule: '@hourly', command: x, timeout: 1m}",
		"  - {name: loud, schedule: '@hourly', command: x, timeout: 1m, log_output: true}")))
	if cfg == nil || len(ps) != 0 {
		t.Fatalf("Parse: problems:\n%s", lines(ps))
	}
	got := map[string]bool{}
	for _, j := range cfg.Jobs {
		got[j.Name] = j.LogOutput
	}
	if want := map[string]bool{"quiet": false, "loud": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("log_output = %v, want %v", got, want)
	}
}
