package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

// limitFile is a file with one job whose last line is extra, at line 6,
// column 5 (its value at column 5+len(key)+2).
func limitFile(extra ...string) []byte { return runAsFile(extra...) }

func TestLimitKeys(t *testing.T) {
	cases := []struct {
		line string
		want Limits
	}{
		{"nice: 10", Limits{Nice: ptr(10)}},
		{"nice: -20", Limits{Nice: ptr(-20)}},
		{"nice: 0", Limits{Nice: ptr(0)}},
		{"ionice: idle", Limits{IONice: "idle"}},
		{"ionice: best-effort", Limits{IONice: "best-effort:4"}},
		{"ionice: best-effort:7", Limits{IONice: "best-effort:7"}},
		{"ionice: realtime:0", Limits{IONice: "realtime:0"}},
		{"oom_score_adj: 500", Limits{OOMScoreAdj: ptr(500)}},
		{"oom_score_adj: -1000", Limits{OOMScoreAdj: ptr(-1000)}},
		{"nofile: 1024", Limits{NoFile: ptr[uint64](1024)}},
		{"nofile: unlimited", Limits{NoFile: ptr[uint64](Unlimited)}},
		{"nproc: 64", Limits{NProc: ptr[uint64](64)}},
		{"core: 0", Limits{Core: ptr[uint64](0)}},
		{"core: 512M", Limits{Core: ptr[uint64](512 << 20)}},
		{"core: unlimited", Limits{Core: ptr[uint64](Unlimited)}},
		{"memory_max: 512M", Limits{MemoryMax: 512 << 20}},
		{"memory_max: 2G", Limits{MemoryMax: 2 << 30}},
		{"memory_max: 1.5G", Limits{MemoryMax: 3 << 29}},
		{"memory_max: 1T", Limits{MemoryMax: 1 << 40}},
		{"memory_max: 4096", Limits{MemoryMax: 4096}},
		{"memory_max: 64KiB", Limits{MemoryMax: 64 << 10}},
		{"memory_high: 256M", Limits{MemoryHigh: 256 << 20}},
		{"cpu_max: 0.5", Limits{CPUMax: 0.5}},
		{"cpu_max: 2", Limits{CPUMax: 2}},
		{"cpu_max: 50%", Limits{CPUMax: 0.5}},
		{"cpu_max: 150%", Limits{CPUMax: 1.5}},
		{"tasks_max: 100", Limits{TasksMax: 100}},
		{"io_weight: 1", Limits{IOWeight: 1}},
		{"io_weight: 10000", Limits{IOWeight: 10000}},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			cfg, ps := ParseAs("jobs.yaml", limitFile("    "+c.line), 0, 0)
			if cfg == nil {
				t.Fatalf("problems:\n%s", lines(ps))
			}
			if got := cfg.Jobs[0].Limits; !reflect.DeepEqual(got, c.want) {
				t.Errorf("Limits = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestLimitKeyErrors(t *testing.T) {
	cases := []struct {
		line, at, msg string
	}{
		{"nice: 20", "6:11", "nice: 20 is outside -20..19"},
		{"nice: -21", "6:11", "nice: -21 is outside -20..19"},
		{"nice: high", "6:11", `nice: expected a whole number from -20 to 19, found "high"`},
		{"nice: 1.5", "6:11", "expected a whole number"},
		{"ionice: idle:3", "6:13", `ionice: "idle:3" is not one of idle, best-effort:N or realtime:N (N 0..7)`},
		{"ionice: best-effort:8", "6:13", `"best-effort:8" is not one of`},
		{"ionice: realtime", "6:13", `"realtime" is not one of`},
		{"ionice: 3", "6:13", `"3" is not one of`},
		{"oom_score_adj: 1001", "6:20", "oom_score_adj: 1001 is outside -1000..1000"},
		{"nofile: 0", "6:13", "nofile: must be greater than 0"},
		{"nofile: many", "6:13", `nofile: expected a whole number, found "many"`},
		{"nofile: 1099511627776", "6:13", "over the kernel's fs.nr_open"},
		{"nproc: -1", "6:12", "nproc: must be greater than 0"},
		{"core: 1MB", "6:11", `core: expected a size like 512M, 2G (K, M, G, T: base 1024) or a number of bytes, found "1MB"`},
		{"memory_max: 0", "6:17", "memory_max: must be greater than 0"},
		{"memory_max: 2X", "6:17", `memory_max: expected a size like 512M`},
		{"memory_max: 99999999T", "6:17", "memory_max: 99999999T is too large"},
		{"memory_high: [1]", "6:18", "memory_high: expected a size"},
		{"cpu_max: 0", "6:14", "cpu_max: 0 is below 1% of a core"},
		{"cpu_max: 0.5%", "6:14", "below 1% of a core"},
		{"cpu_max: half", "6:14", `cpu_max: expected cores (0.5, 2) or a percentage of one core (50%), found "half"`},
		{"cpu_max: .inf", "6:14", "cpu_max: expected cores"},
		{"tasks_max: 0", "6:16", "tasks_max: must be greater than 0"},
		{"io_weight: 0", "6:16", "io_weight: 0 is outside 1..10000"},
		{"io_weight: 10001", "6:16", "io_weight: 10001 is outside 1..10000"},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			_, ps := ParseAs("jobs.yaml", limitFile("    "+c.line), 0, 0)
			errs := Errors(ps)
			if len(errs) != 1 {
				t.Fatalf("want one error, got:\n%s", lines(ps))
			}
			if at(errs[0]) != c.at || !strings.Contains(errs[0].Message, c.msg) {
				t.Errorf("got %s: %s\nwant %s: ...%s...", at(errs[0]), errs[0].Message, c.at, c.msg)
			}
		})
	}
}

// TestLimitDefaults: the keys are inherited from defaults, a job's own
// value wins key by key, and a bad value in defaults is reported once, at
// defaults.
func TestLimitDefaults(t *testing.T) {
	src := y("defaults:", "  nice: 10", "  memory_max: 1G", "  ionice: idle",
		"jobs:",
		"  - {name: a, schedule: '@hourly', command: x, timeout: 1m}",
		"  - {name: b, schedule: '@hourly', command: x, timeout: 1m, nice: 5, cpu_max: 50%}")
	cfg, ps := ParseAs("jobs.yaml", []byte(src), 0, 0)
	if cfg == nil {
		t.Fatalf("problems:\n%s", lines(ps))
	}
	want := []Limits{
		{Nice: ptr(10), MemoryMax: 1 << 30, IONice: "idle"},
		{Nice: ptr(5), MemoryMax: 1 << 30, IONice: "idle", CPUMax: 0.5},
	}
	for i, w := range want {
		if got := cfg.Jobs[i].Limits; !reflect.DeepEqual(got, w) {
			t.Errorf("job %d: Limits = %+v, want %+v", i, got, w)
		}
	}
	bad := y("defaults:", "  nice: 99", "jobs:",
		"  - {name: a, schedule: '@hourly', command: x, timeout: 1m}",
		"  - {name: b, schedule: '@hourly', command: x, timeout: 1m}")
	_, ps = ParseAs("jobs.yaml", []byte(bad), 0, 0)
	if errs := Errors(ps); len(errs) != 1 || at(errs[0]) != "2:9" {
		t.Errorf("want one error at 2:9, got:\n%s", lines(ps))
	}
}

// TestLimitNeedsRoot: what the kernel refuses to an unprivileged process
// is an error when the supervisor is not root, naming the key, and
// accepted from root.
func TestLimitNeedsRoot(t *testing.T) {
	cases := []struct {
		line, msg string
	}{
		{"nice: -20", "nice: -20 is below the supervisor's own nice"},
		{"ionice: realtime:4", "ionice: the realtime class; only a root supervisor may set it"},
		{"oom_score_adj: -1000", "oom_score_adj: -1000 is below the supervisor's own"},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			_, ps := ParseAs("jobs.yaml", limitFile("    "+c.line), 1000, 1000)
			errs := Errors(ps)
			if len(errs) != 1 || !strings.Contains(errs[0].Message, c.msg) || !strings.Contains(errs[0].Message, "uid 1000") {
				t.Fatalf("want one error %q, got:\n%s", c.msg, lines(ps))
			}
			if cfg, ps := ParseAs("jobs.yaml", limitFile("    "+c.line), 0, 0); cfg == nil {
				t.Errorf("refused for root:\n%s", lines(ps))
			}
		})
	}
	for _, ok := range []string{"nice: 19", "ionice: idle", "oom_score_adj: 1000"} {
		t.Run(ok, func(t *testing.T) {
			if cfg, ps := ParseAs("jobs.yaml", limitFile("    "+ok), 1000, 1000); cfg == nil {
				t.Errorf("refused for a user:\n%s", lines(ps))
			}
		})
	}
}

// TestLintControllers: the check package cgroup passes in is asked once
// per controller, and each key it cannot apply gets an error at its
// value.
func TestLintControllers(t *testing.T) {
	src := y("jobs:",
		"  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m",
		"    memory_max: 1G", "    memory_high: 2G", "    cpu_max: 1", "    tasks_max: 10",
		"  - {name: b, schedule: '@hourly', command: x, timeout: 1m, memory_max: 1G}")
	cfg, ps := ParseAs("jobs.yaml", []byte(src), 0, 0)
	if cfg == nil {
		t.Fatalf("problems:\n%s", lines(ps))
	}
	asked := map[string]int{}
	check := func(c string) error {
		asked[c]++
		if c == "cpu" {
			return nil
		}
		return errors.New("not enabled in cgroup.subtree_control")
	}
	var got []string
	problems := Lint(cfg, time.Now(), WithControllerCheck(check))
	for _, p := range problems {
		got = append(got, at(p)+" "+p.Message)
	}
	if n := len(Errors(problems)); n != 4 {
		t.Errorf("%d errors, want 4: a limit this host cannot apply is an error, not a warning", n)
	}
	want := []string{
		"6:17 memory_max cannot be applied on this host (the memory controller: not enabled in cgroup.subtree_control); the job's runs would not start",
		"7:18 memory_high is not below memory_max: the run is never throttled before memory_max ends it",
		"7:18 memory_high cannot be applied on this host (the memory controller: not enabled in cgroup.subtree_control); the job's runs would not start",
		"9:16 tasks_max cannot be applied on this host (the pids controller: not enabled in cgroup.subtree_control); the job's runs would not start",
		"10:73 memory_max cannot be applied on this host (the memory controller: not enabled in cgroup.subtree_control); the job's runs would not start",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Lint:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !reflect.DeepEqual(asked, map[string]int{"memory": 1, "cpu": 1, "pids": 1}) {
		t.Errorf("asked %v, want each controller once", asked)
	}
	if ps := Lint(cfg, time.Now()); len(ps) != 1 {
		t.Errorf("without a check, want only the memory_high warning, got:\n%s", lines(ps))
	}
}
