package config

import (
	"fmt"
	"strings"
	"testing"
)

// y joins lines into a file, so that line N of the file is argument N.
func y(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// at formats a problem's position as LINE:COL.
func at(p Problem) string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// TestParseErrors feeds one mistake per file and expects exactly one error,
// at the offending node, naming what is wrong.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, src, at, msg string
	}{
		// YAML syntax
		{"second colon", y("a: b: c"), "1:5", "mapping values are not allowed"},
		{"tab indent", y("jobs:", "  - name: a", "    schedule: '@hourly'", "\tcommand: x"), "4:1", "not tabs"},
		{"unclosed quote", y("jobs:", "  - name: a", `    schedule: "@hourly`, "    command: x"), "3:5", "unexpected end of stream"},
		{"bad indent", y("jobs:", "  - name: a", "    schedule: '@hourly'", "  command: x"), "4:3", "did not find expected '-'"},
		{"unknown anchor", y("jobs:", "  - name: a", "    schedule: *nope"), "3:15", "unknown anchor 'nope'"},
		{"second document", y("jobs: []", "---", "jobs: []"), "3:1", "second YAML document"},

		// shape and keys
		{"top level list", y("- name: a"), "1:1", "top level must be a mapping"},
		{"unknown top key", y("state_dirr: x", "jobs: []"), "1:1", `unknown key "state_dirr" (did you mean "state_dir"?)`},
		{"an unknown lock backend", y("lock_backend: {type: etcd}", "jobs: []"), "1:22", `lock_backend.type: "etcd" is not one of file, redis, mysql, postgres`},
		{"a mysql backend without dsn", y("lock_backend: {type: mysql}", "jobs: []"), "1:1", `lock_backend: the mysql backend needs a dsn`},
		{"a bad mysql dsn", y("lock_backend:", "  type: mysql", "  dsn: 'root:pw@127.0.0.1/db'", "jobs: []"), "3:8", `lock_backend.dsn: "***@127.0.0.1/db" is not a USER:PASS@tcp(HOST:PORT)/DB dsn`},
		{"a mysql dsn without database", y("lock_backend:", "  type: mysql", "  dsn: 'root:pw@tcp(127.0.0.1:3306)/'", "jobs: []"), "3:8", `is not a USER:PASS@tcp(HOST:PORT)/DB dsn`},
		{"a mysql backend given a url", y("lock_backend:", "  type: mysql", "  url: 'mysql://x'", "  dsn: 'u@tcp(h:1)/db'", "jobs: []"), "3:3", `the mysql backend takes a dsn`},
		{"a bad postgres url", y("lock_backend:", "  type: postgres", "  url: 'redis://u:pw@127.0.0.1/0'", "jobs: []"), "3:8", `lock_backend.url: "redis://***@127.0.0.1/0" is not a postgres://USER:PASS@HOST:PORT/DB URL`},
		{"a postgres url without database", y("lock_backend:", "  type: postgres", "  url: 'postgres://u@127.0.0.1:5432'", "jobs: []"), "3:8", `is not a postgres://`},
		{"a postgres backend given a dsn", y("lock_backend:", "  type: postgres", "  dsn: 'x'", "  url: 'postgres://u@h/db'", "jobs: []"), "3:3", `the postgres backend takes a url, not a dsn`},
		{"an unset dsn variable", y("lock_backend:", "  type: mysql", "  dsn: 'u:${CV_TEST_UNSET_PW}@tcp(h:1)/db'", "jobs: []"), "3:8", `lock_backend.dsn: environment variable CV_TEST_UNSET_PW is not set`},
		{"a bad prefix", y("lock_backend:", "  type: postgres", "  url: 'postgres://u@h/db'", "  prefix: 'a b'", "jobs: []"), "4:11", `lock_backend.prefix: "a b"`},
		{"an unknown history backend", y("history_backend: {type: mysql}", "jobs: []"), "1:25", `history_backend.type: "mysql" is not one of sqlite, postgres`},
		{"a postgres history without url", y("history_backend: {type: postgres}", "jobs: []"), "1:1", `history_backend: the postgres backend needs a url`},
		{"a history url pgx cannot parse", y("history_backend:", "  type: postgres", "  url: 'postgres://u:pw@h:notaport/db'", "jobs: []"), "3:8", `history_backend.url: "postgres://***@h:notaport/db" is not a postgres://USER:PASS@HOST:PORT/DB URL`},
		{"a history url of another scheme", y("history_backend:", "  type: postgres", "  url: 'mysql://u@h/db'", "jobs: []"), "3:8", `is not a postgres://`},
		{"a url for the sqlite history", y("history_backend:", "  type: sqlite", "  url: 'postgres://u@h/db'", "jobs: []"), "3:3", `history_backend.url: the sqlite history is this host's own store and takes no url`},
		{"an unset history url variable", y("history_backend:", "  type: postgres", "  url: 'postgres://u:${CV_TEST_UNSET_PW}@h/db'", "jobs: []"), "3:8", `history_backend.url: environment variable CV_TEST_UNSET_PW is not set`},
		{"an unknown history backend key", y("history_backend:", "  type: postgres", "  url: 'postgres://u@h/db'", "  ttl: 3s", "jobs: []"), "4:3", `unknown key "ttl"`},
		{"metrics without port", y("metrics: {listen: localhost}", "jobs: []"), "1:19", `metrics.listen: "localhost" is not HOST:PORT`},
		{"negative retries", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    retries: -1"), "6:14", "retries: must be greater than 0"},
		{"unknown retry_on", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    retry_on: [failed, error]"), "6:24", `retry_on: "error" is not one of failed, timeout`},
		{"bad warn_after", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    warn_after: soon"), "6:17", `warn_after: "soon" is neither a duration, auto nor off; write it like 90s, 10m, auto or off`},
		{"bare warn_fast", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    warn_fast: 30"), "6:16", `warn_fast: 30 has no unit; write "30s"`},
		{"bool warn_fast", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    warn_fast: yes"), "6:16", `warn_fast: "yes" is neither a duration, auto nor off`},
		{"zero heartbeat_timeout", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    heartbeat_timeout: 0s"), "6:24", "heartbeat_timeout: must be above 0"},
		{"heartbeat_timeout not below timeout", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    heartbeat_timeout: 1m"), "6:24", "heartbeat_timeout: 1m0s is not below timeout 1m0s"},
		{"heartbeat_timeout in defaults over timeout", y("defaults:", "  heartbeat_timeout: 2m", "jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m"), "2:22", "heartbeat_timeout: 2m0s is not below timeout 1m0s"},
		{"bad heartbeat_timeout", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: none", "    heartbeat_timeout: soon"), "6:24", `heartbeat_timeout: invalid duration "soon"`},
		{"ping not http", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    ping: ftp://x/y"), "6:11", `ping: "ftp://x/y" is not an http:// or https:// URL`},
		{"unknown notify event", y("defaults:", "  notify:", "    - on: [failure, fail]", "      url: http://127.0.0.1:9/h", "jobs: []"), "3:21", `notify.on: "fail" is not one of failure, timeout`},
		{"notify with url and command", y("defaults:", "  notify:", "    - on: [failure]", "      url: http://127.0.0.1:9/h", "      command: page", "jobs: []"), "3:7", "exactly one of url or command"},
		{"notify unknown key", y("defaults:", "  notify:", "    - on: [skip]", "      command: page", "      after_skip: 3", "jobs: []"), "5:7", `unknown key "after_skip" (did you mean "after_skips"?)`},
		{"notify header unset env", y("defaults:", "  notify:", "    - on: [skip]", "      url: http://127.0.0.1:9/h", "      headers: {X-Token: '${CRONVISOR_TEST_UNSET_VAR}'}", "jobs: []"), "5:26", "CRONVISOR_TEST_UNSET_VAR is not set"},
		{"job key at top", y("timeout: 1m", "jobs: []"), "1:1", "put it under defaults"},
		{"top key in job", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    state_dir: s"), "6:5", "belongs at the top level"},
		{"typo in job key", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    enabeld: false"), "6:5", `did you mean "enabled"?`},
		{"alias of job key", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    tz: UTC"), "6:5", `unknown key "tz" (did you mean "timezone"?)`},
		{"duplicate key", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    timeout: 2m"), "6:5", `duplicate key "timeout" (first at line 5)`},
		{"complex key", y("? [a, b]", ": 1", "jobs: []"), "1:3", "a key must be a plain word"},
		{"jobs is a mapping", y("jobs:", "  a: {schedule: '@hourly'}"), "2:3", "expected a list of jobs"},
		{"job is a string", y("jobs:", "  - sync_orders"), "2:5", "a job must be a mapping"},
		{"merge of a string", y("jobs:", "  - <<: nope", "    name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m"), "2:9", "a merge (<<) takes a mapping"},

		// name and lock
		{"duplicate name", y("jobs:", "  - {name: a, schedule: '@hourly', command: x, timeout: 1m}", "  - {name: a, schedule: '@daily', command: y, timeout: 1m}"), "3:12", `duplicate job name "a" (first at line 2)`},
		{"no name", y("jobs:", "  - schedule: '@hourly'", "    command: x", "    timeout: 1m"), "2:5", "job has no name"},
		{"name with space", y("jobs:", "  - name: sync orders", "    schedule: '@hourly'", "    command: x", "    timeout: 1m"), "2:11", "may contain only letters"},
		{"name dot dot", y("jobs:", "  - name: ..", "    schedule: '@hourly'", "    command: x", "    timeout: 1m"), "2:11", "names a directory"},
		{"lock with slash", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    lock: db/main"), "6:11", `lock "db/main" may contain only`},

		// schedule and zone
		{"no schedule", y("jobs:", "  - name: a", "    command: x", "    timeout: 1m"), "2:5", `job "a" has no schedule`},
		{"bad schedule", y("jobs:", "  - name: a", "    schedule: '61 * * * *'", "    command: x", "    timeout: 1m"), "3:15", "bad schedule"},
		{"schedule list", y("jobs:", "  - name: a", "    schedule: [0, 5]", "    command: x", "    timeout: 1m"), "3:15", "schedule: expected a string, found a list"},
		{"unknown zone", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    timezone: Mars/Olympus", "    command: x", "    timeout: 1m"), "4:15", `unknown zone "Mars/Olympus"`},

		// command, shell, env
		{"no command", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    timeout: 1m"), "2:5", `job "a" has no command`},
		{"blank command", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: '  '", "    timeout: 1m"), "4:14", "command is empty"},
		{"empty argv", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: []", "    timeout: 1m"), "4:14", "the list is empty"},
		{"argv with mapping", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: [echo, {a: 1}]", "    timeout: 1m"), "4:21", "each argument must be a string"},
		{"empty program", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: ['', x]", "    timeout: 1m"), "4:15", "the program (the first item) is empty"},
		{"relative shell", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    shell: bash", "    timeout: 1m"), "5:12", "not an absolute path"},
		{"env list", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    env: [A=1]", "    timeout: 1m"), "5:10", "env: expected a mapping"},
		{"env bad name", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    env: {APP-ENV: x}", "    timeout: 1m"), "5:11", `"APP-ENV" is not a valid variable name`},
		{"env list value", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    env: {A: [1]}", "    timeout: 1m"), "5:14", "env A: expected a string"},
		{"env null value", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    env: {A: }", "    timeout: 1m"), "5:14", "env A has no value"},
		{"NUL in env value", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", `    env: {A: "x\0y"}`, "    timeout: 1m"), "5:14", "env A: the value contains a NUL byte"},
		{"NUL in command", y("jobs:", "  - name: a", "    schedule: '@hourly'", `    command: "echo \0"`, "    timeout: 1m"), "4:14", "an argument contains a NUL byte"},
		{"NUL in argv", y("jobs:", "  - name: a", "    schedule: '@hourly'", `    command: [echo, "a\0b"]`, "    timeout: 1m"), "4:21", "an argument contains a NUL byte"},
		{"NUL in dir", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", `    dir: "/tmp\0x"`, "    timeout: 1m"), "5:10", "dir: contains a NUL byte"},
		{"NUL in shell", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", `    shell: "/bin/sh\0"`, "    timeout: 1m"), "5:12", "shell: contains a NUL byte"},
		{"3 MB env value", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    env: {BIG: "+strings.Repeat("x", 3<<20)+"}", "    timeout: 1m"), "5:16", "env BIG: the variable is 3073 KiB, over the kernel's limit of 128 KiB per variable (MAX_ARG_STRLEN)"},
		{"200 KiB argument", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: 'echo "+strings.Repeat("x", 200<<10)+"'", "    timeout: 1m"), "4:14", "over the kernel's limit of 128 KiB per argument"},
		{"environment over the total", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    env: {"+manyVars(70, 100<<10)+"}", "    timeout: 1m"), "5:10", `job "a": its command and environment (with the supervisor's) take`},
		{"env reserved", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    env: {CRONVISOR_RUN_ID: x}", "    timeout: 1m"), "5:11", "set by cronvisor"},

		// durations and policies
		{"no timeout", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x"), "2:5", `job "a" has no timeout; set one or write "timeout: none"`},
		{"bare number timeout", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 90"), "5:14", `write "90s"`},
		{"negative timeout", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: -5s"), "5:14", "negative"},
		{"long value clipped", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: "+strings.Repeat("x", 500)), "5:14", `invalid duration "xxxxx`},
		{"timeout beyond the limit", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 9999999h"), "5:14", "timeout: 9999999h is beyond the longest supported duration, 2562047h47m16.854775807s (about 292 years)"},
		{"jitter beyond the limit", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    jitter: 300y"), "6:13", `invalid duration "300y"`},
		{"catch_up beyond the limit", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    catch_up: 2562048h"), "6:15", "catch_up: 2562048h is beyond the longest"},
		{"word timeout", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: soon"), "5:14", `invalid duration "soon"`},
		{"zero timeout", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 0s"), "5:14", `write "timeout: none"`},
		{"day kill_grace", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    kill_grace: 1.5d"), "6:17", `invalid duration "1.5d"`},
		{"negative jitter", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    jitter: -1s"), "6:13", "negative"},
		{"catch_up list", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    catch_up: [1h]"), "6:15", "expected a duration"},
		{"kubernetes overlap", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    overlap: Forbid"), "6:14", `"Forbid" is not one of skip, queue, replace, allow`},
		{"bad on_lock_lost", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    on_lock_lost: ignore"), "6:19", `on_lock_lost: "ignore" is not one of end, continue`},
		{"string log_output", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    log_output: off"), "6:17", "log_output: expected true or false"},
		{"yes for enabled", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m", "    enabled: yes"), "6:14", "expected true or false"},

		// defaults
		{"name in defaults", y("defaults:", "  name: x", "jobs: []"), "2:3", "defaults cannot set name"},
		{"lock in defaults", y("defaults:", "  lock: x", "jobs: []"), "2:3", "defaults cannot set lock"},
		{"defaults not mapping", y("defaults: 10m", "jobs: []"), "1:11", "defaults: expected a mapping"},
		{"bad default once", y("defaults:", "  overlap: never", "jobs:",
			"  - {name: a, schedule: '@hourly', command: x, timeout: 1m}",
			"  - {name: b, schedule: '@hourly', command: x, timeout: 1m}"), "2:12", `"never" is not one of`},

		// top-level settings
		{"bare shutdown_grace", y("shutdown_grace: 30", "jobs: []"), "1:17", `write "30s"`},
		{"state_dir list", y("state_dir: [a]", "jobs: []"), "1:12", "state_dir: expected a string"},
		{"backend type", y("lock_backend:", "  type: etcd", "jobs: []"), "2:9", `"etcd" is not one of file, redis`},
		{"redis without url", y("lock_backend:", "  type: redis", "jobs: []"), "1:1", "needs a url"},
		{"redis url unset var", y("lock_backend:", "  type: redis", "  url: redis://:${CRONVISOR_TEST_NOT_SET}@h:6379/0", "jobs: []"), "3:8", "CRONVISOR_TEST_NOT_SET is not set"},
		{"redis url scheme", y("lock_backend:", "  type: redis", "  url: http://h:6379", "jobs: []"), "3:8", "is not a redis://"},
		{"short ttl", y("lock_backend:", "  type: redis", "  url: redis://h:6379/0", "  ttl: 500ms", "jobs: []"), "4:8", "shorter than 1s"},
		{"state_dir is a file", y("state_dir: testdata/valid.yaml", "jobs: []"), "1:12", "valid.yaml is a file, not a directory"},
		{"state_dir below a file", y("state_dir: testdata/valid.yaml/state", "jobs: []"), "1:12", "is not a directory: a part of the path is a file"},
		{"NUL in state_dir", y(`state_dir: "st\0ate"`, "jobs: []"), "1:12", "state_dir: contains a NUL byte"},
		{"shutdown_grace beyond the limit", y("shutdown_grace: 9999999h", "jobs: []"), "1:17", "shutdown_grace: 9999999h is beyond the longest"},
		{"ttl beyond the limit", y("lock_backend:", "  type: redis", "  url: redis://h:6379/0", "  ttl: 99999999999s", "jobs: []"), "4:8", "lock_backend.ttl: 99999999999s is beyond the longest"},
		{"keep_age beyond the limit", y("history:", "  keep_age: 3000000h", "jobs: []"), "2:13", "history.keep_age: 3000000h is beyond the longest"},
		{"backend list", y("lock_backend: [file]", "jobs: []"), "1:15", "lock_backend: expected a mapping"},
		{"keep_runs zero", y("history:", "  keep_runs: 0", "jobs: []"), "2:14", "must be greater than 0"},
		{"keep_runs word", y("history:", "  keep_runs: many", "jobs: []"), "2:14", "expected a whole number"},
		{"log_limit unit", y("history:", "  log_limit: 1XB", "jobs: []"), "2:14", "expected a size like 1MiB"},
		{"history unknown", y("history:", "  keep: 5", "jobs: []"), "2:3", `unknown key "keep"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ps := Parse("jobs.yaml", []byte(tc.src))
			if cfg != nil {
				t.Errorf("Parse returned a config despite errors")
			}
			errs := Errors(ps)
			if len(errs) != 1 {
				t.Fatalf("want exactly one error at %s containing %q, got %d:\n%s", tc.at, tc.msg, len(errs), lines(errs))
			}
			if len(errs[0].Message) > 200 {
				t.Errorf("message of %d bytes", len(errs[0].Message))
			}
			if got := at(errs[0]); got != tc.at || !strings.Contains(errs[0].Message, tc.msg) {
				t.Errorf("got  %s: %s\nwant %s: ...%s...", got, errs[0].Message, tc.at, tc.msg)
			}
		})
	}
}

// TestParseReportsAll checks that one pass reports every problem of a file,
// in order of position, each prefixed by the path.
func TestParseReportsAll(t *testing.T) {
	src := y(
		"shutdown_grace: 30",             // 1
		"lock_backend: {type: consul}",   // 2
		"defaults:",                      // 3
		"  timout: 1m",                   // 4
		"jobs:",                          // 5
		"  - name: a",                    // 6
		"    schedule: '* * *'",          // 7
		"    command: echo",              // 8
		"    timeout: 1m",                // 9
		"  - name: b",                    // 10
		"    schedule: '@daily'",         // 11
		"    timezone: Nowhere/Atlantis", // 12
		"    command: [echo]",            // 13
		"    overlap: sometimes",         // 14
		"    timeout: 1m",                // 15
		"  - name: a",                    // 16
		"    schedule: '@hourly'",        // 17
		"    command: echo",              // 18
		"    timeout: forever",           // 19
	)
	want := []string{
		`jobs.yaml:1:17: shutdown_grace: 30 has no unit`,
		`jobs.yaml:2:22: lock_backend.type: "consul" is not one of`,
		`jobs.yaml:4:3: unknown key "timout" (did you mean "timeout"?)`,
		`jobs.yaml:7:15: bad schedule "* * *"`,
		`jobs.yaml:12:15: timezone: unknown zone "Nowhere/Atlantis"`,
		`jobs.yaml:14:14: overlap: "sometimes" is not one of`,
		`jobs.yaml:16:11: duplicate job name "a" (first at line 6)`,
		`jobs.yaml:19:14: timeout: invalid duration "forever"`,
	}
	cfg, ps := Parse("jobs.yaml", []byte(src))
	if cfg != nil {
		t.Errorf("Parse returned a config despite errors")
	}
	if len(ps) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(ps), len(want), lines(ps))
	}
	for i, p := range ps {
		if !strings.HasPrefix(p.String(), want[i]) {
			t.Errorf("problem %d:\ngot  %s\nwant %s...", i, p, want[i])
		}
	}
}

// manyVars writes n variables of size bytes each as flow-mapping entries.
func manyVars(n, size int) string {
	vars := make([]string, n)
	for i := range vars {
		vars[i] = fmt.Sprintf("V%d: %s", i, strings.Repeat("x", size))
	}
	return strings.Join(vars, ", ")
}

func lines(ps []Problem) string {
	var b strings.Builder
	Report(&b, ps)
	return b.String()
}
