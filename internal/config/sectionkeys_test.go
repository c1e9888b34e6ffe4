package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sectionPairs holds, for each key of the mappings inside the top level
// and the jobs (TestJobKeysSetJobFields and TestTopKeysSetConfigFields
// cover those two), two values of the mapping that differ in that key.
// Where a key cannot change alone (a backend's type needs its own url),
// the pair differs in what must change with it.
var sectionPairs = map[string][2]string{
	"lock_backend/type":    {"{type: redis, url: 'redis://h:6379/0'}", "{type: postgres, url: 'postgres://u:p@h:5432/db'}"},
	"lock_backend/url":     {"{type: redis, url: 'redis://h:6379/0'}", "{type: redis, url: 'redis://h:6379/1'}"},
	"lock_backend/dsn":     {"{type: mysql, dsn: 'u:p@tcp(h:3306)/a'}", "{type: mysql, dsn: 'u:p@tcp(h:3306)/b'}"},
	"lock_backend/ttl":     {"{type: redis, url: 'redis://h:6379/0'}", "{type: redis, url: 'redis://h:6379/0', ttl: 7s}"},
	"lock_backend/prefix":  {"{type: redis, url: 'redis://h:6379/0'}", "{type: redis, url: 'redis://h:6379/0', prefix: 'x:'}"},
	"history_backend/type": {"{type: sqlite}", "{type: postgres, url: 'postgres://u:p@h:5432/db'}"},
	"history_backend/url":  {"{type: postgres, url: 'postgres://u:p@h:5432/a'}", "{type: postgres, url: 'postgres://u:p@h:5432/b'}"},
	"history/keep_runs":    {"{}", "{keep_runs: 5}"},
	"history/keep_age":     {"{}", "{keep_age: 1h}"},
	"history/log_limit":    {"{}", "{log_limit: 2MiB}"},
	"metrics/listen":       {"{listen: '127.0.0.1:9001'}", "{listen: '127.0.0.1:9002'}"},
	"console/read_only":    {"{read_only: false}", "{read_only: true}"},
	"notify[]/on":          {"{on: [failure], url: 'https://h.example/'}", "{on: [timeout], url: 'https://h.example/'}"},
	"notify[]/url":         {"{on: [failure], url: 'https://h.example/a'}", "{on: [failure], url: 'https://h.example/b'}"},
	"notify[]/headers":     {"{on: [failure], url: 'https://h.example/'}", "{on: [failure], url: 'https://h.example/', headers: {X-A: b}}"},
	"notify[]/command":     {"{on: [failure], command: a}", "{on: [failure], command: b}"},
	"notify[]/after_skips": {"{on: [skip], url: 'https://h.example/'}", "{on: [skip], url: 'https://h.example/', after_skips: 3}"},
}

// sectionFile writes value as the mapping path names, beside one job.
func sectionFile(path, value string) string {
	job := "{name: a, schedule: '@hourly', command: [/bin/true], timeout: 1m%s}"
	if path == "notify[]" {
		return "jobs: [" + fmt.Sprintf(job, ", notify: ["+value+"]") + "]\n"
	}
	return path + ": " + value + "\njobs: [" + fmt.Sprintf(job, "") + "]\n"
}

// sectionProblems lists the keys of the reference's inner mappings
// without a pair in pairs, and those whose pair parses to equal Configs:
// a key accepted and never applied.
func sectionProblems(t *testing.T, pairs map[string][2]string) []string {
	t.Helper()
	parse := func(path, value string) *Config {
		cfg, ps := ParseAs("/nonexistent/jobs.yaml", []byte(sectionFile(path, value)), 0, 0)
		for _, p := range ps {
			if !p.Warning {
				t.Fatalf("%s: %s: %s", path, value, p)
			}
		}
		return cfg
	}
	var out []string
	for _, sec := range Reference() {
		if slices.Contains([]string{"", "defaults", "jobs[]"}, sec.Path) {
			continue
		}
		for _, k := range sec.Keys {
			pair, ok := pairs[sec.Path+"/"+k.Name]
			switch {
			case !ok:
				out = append(out, sec.Path+"/"+k.Name+": no pair in sectionPairs")
			case reflect.DeepEqual(parse(sec.Path, pair[0]), parse(sec.Path, pair[1])):
				out = append(out, sec.Path+"/"+k.Name+": both values decode alike")
			}
		}
	}
	return out
}

// TestSectionKeysAreApplied: each key of lock_backend, history_backend,
// history, metrics, console and a notify target changes the Config.
func TestSectionKeysAreApplied(t *testing.T) {
	if ps := sectionProblems(t, sectionPairs); len(ps) > 0 {
		t.Fatalf("keys of the reference not applied:\n%s", strings.Join(ps, "\n"))
	}
	same := []byte(sectionFile("history", "{}"))
	a, _ := ParseAs("/nonexistent/jobs.yaml", same, 0, 0)
	b, _ := ParseAs("/nonexistent/jobs.yaml", same, 0, 0)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same file parsed twice differs: the check proves nothing")
	}
	// The check must be able to fail: a key without a pair, and a pair
	// whose values decode alike, are found.
	fewer := maps.Clone(sectionPairs)
	delete(fewer, "history/keep_age")
	fewer["history/keep_runs"] = [2]string{"{}", "{keep_runs: 1000}"}
	want := []string{"history/keep_runs: both values decode alike", "history/keep_age: no pair in sectionPairs"}
	if got := sectionProblems(t, fewer); !slices.Equal(got, want) {
		t.Errorf("with keep_age without a pair and keep_runs at its default: %q, want %q", got, want)
	}
}
