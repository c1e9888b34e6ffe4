package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// parseBoth parses data cut into batches of batch bytes and whole, as
// Parse (reading false) or ParseForReading would, and fails t unless both
// give the same Config and the same problems. It returns whether the cut
// was kept.
func parseBoth(t *testing.T, data []byte, batch int, reading bool) (split bool) {
	t.Helper()
	mk := func() *decoder {
		d := newDecoder("/srv/cron/jobs.yaml", 0, 0)
		d.reading = reading
		return d
	}
	dc, cut := parse(data, batch, mk)
	dw, whole := parse(data, 0, mk)
	if dw.split != nil {
		t.Fatal("parse with batch 0 cut the list")
	}
	pc, pw := tidy(dc.problems), tidy(dw.problems)
	if !reflect.DeepEqual(pc, pw) {
		t.Errorf("batch %d: problems differ\ncut:\n%s\nwhole:\n%s", batch, lines(pc), lines(pw))
	}
	if !reflect.DeepEqual(cut, whole) {
		t.Errorf("batch %d: configs differ\ncut:   %+v\nwhole: %+v", batch, cut, whole)
	}
	return dc.split != nil
}

// TestSplitSameAsWhole checks that cutting the jobs list changes nothing:
// the same Config and the same problems, at the same lines and columns,
// whatever the batches; and that the files that allow the cut keep it
// (else the comparison would compare the whole parse with itself).
func TestSplitSameAsWhole(t *testing.T) {
	valid, err := os.ReadFile(filepath.Join("testdata", "valid.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	job := func(name string) []string {
		return []string{"  - name: " + name, "    schedule: '@hourly'", "    command: x", "    timeout: 1m"}
	}
	jobs := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, job(n)...)
		}
		return out
	}
	cat := func(parts ...[]string) string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return y(all...)
	}
	cases := []struct {
		name  string
		src   string
		split bool // the cut is kept at every batch size
	}{
		{"many jobs", string(manyJobs(300, true)), true},
		{"many argv jobs", string(manyJobs(300, false)), true},
		{"list at column 1", y("jobs:", "- name: a", "  schedule: '@hourly'", "  command: x", "  timeout: 1m", "- {name: b, schedule: '@daily', command: y, timeout: 1m}", "state_dir: s"), true},
		{"comments and blank lines", cat([]string{"# head", "jobs: # the list", "# before", ""}, jobs("a"), []string{"# between", "", "    # deeper"}, jobs("b"), []string{"# after"}), true},
		{"keys after the list", cat([]string{"jobs:"}, jobs("a", "b"), []string{"history:", "  keep_runs: -1", "durability: nope"}), true},
		{"errors in items", cat([]string{"defaults: {timeout: 1m}", "jobs:"}, jobs("a"), []string{"  - name: b c", "    schedule: '61 * * * *'", "    command: x"}, jobs("d"), []string{"  - {name: e, schedule: '@daily', command: [], overlap: nah}"}), true},
		{"duplicate names across batches", cat([]string{"jobs:"}, jobs("a", "b", "a")), true},
		{"a job that is no mapping", cat([]string{"jobs:"}, jobs("a"), []string{"  - just-a-name", "  -", "  - [1, 2]"}), true},
		{"anchor used within its item", y("jobs:", "  - name: a", "    schedule: &s '@hourly'", "    command: *s", "    timeout: 1m"), true},
		{"block scalar", cat([]string{"jobs:", "  - name: a", "    schedule: '@hourly'", "    timeout: 1m", "    command: |", "      echo one", "      - not an item", "    env: {A: b}"}, jobs("b")), true},
		{"second document after the list", cat([]string{"jobs:"}, jobs("a"), []string{"---", "jobs: []"}), true},
		{"defaults after the list", cat([]string{"jobs:"}, jobs("a"), []string{"defaults:", "  env: {A: b}", "  overlap: queue"}), true},
		{"testdata valid", string(valid), false}, // an alias to an anchor before jobs:
		{"anchor in one item used in the next", y("jobs:", "  - name: a", "    schedule: &s '@hourly'", "    command: x", "    timeout: 1m", "  - name: b", "    schedule: *s", "    command: x", "    timeout: 1m"), false},
		{"anchor in a job used after the list", cat([]string{"jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: &t 1m"}, []string{"shutdown_grace: *t"}), false},
		{"anchor redefined in a job", cat([]string{"x-a: &t 1m", "jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: &t 2m"}, []string{"shutdown_grace: *t"}), false},
		{"quoted scalar across a dash line", y("jobs:", "  - name: a", "    schedule: '@hourly'", "    timeout: 1m", "    command: \"echo", "  - b\""), false},
		{"flow list", y("jobs: [{name: a, schedule: '@hourly', command: x, timeout: 1m}]"), false},
		{"jobs is a mapping", y("jobs:", "  a: {schedule: '@hourly'}"), false},
		{"jobs with an anchor", cat([]string{"jobs: &j"}, jobs("a")), false},
		{"jobs twice", cat([]string{"jobs:"}, jobs("a"), []string{"jobs:"}, jobs("b")), true}, // the second is in the skeleton
		{"jobs inside a string", y("x-doc: \"a", "jobs:", "  - b\"", "jobs: []"), false},
		{"jobs not at the top", y("x:", "  jobs:", "  - name: a"), false},
		{"syntax error in an item", cat([]string{"jobs:"}, jobs("a"), []string{"  - name: b", "    schedule: \"@hourly", "    command: x"}), false},
		{"tab in an item", cat([]string{"jobs:"}, jobs("a"), []string{"  - name: b", "\tschedule: x"}), false},
		{"item indented less", cat([]string{"jobs:"}, jobs("a"), []string{" - name: b"}), false},
		{"crlf", "jobs:\r\n  - {name: a, schedule: '@hourly', command: x, timeout: 1m}\r\n", false},
		{"directive", "%YAML 1.1\n---\njobs:\n  - {name: a, schedule: '@hourly', command: x, timeout: 1m}\n", false},
		{"no list", y("state_dir: s"), false},
		{"empty list", y("jobs:", "# none yet"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, batch := range []int{1, 100, batchBytes} {
				for _, reading := range []bool{false, true} {
					split := parseBoth(t, []byte(tc.src), batch, reading)
					if tc.split && !split {
						t.Errorf("batch %d: the cut was not kept", batch)
					}
					if !tc.split && split && batch == 1 {
						t.Errorf("batch %d: the cut was kept", batch)
					}
				}
			}
		})
	}
}
