package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestTopTable(t *testing.T) {
	for i, k := range topTable {
		if k.Doc == "" || strings.Contains(k.Doc, "\n") || slices.Index(topKeys, k.Name) != i {
			t.Errorf("%q: want a one-line doc and a name listed once", k.Name)
		}
		if own := k.Name == "defaults" || k.Name == "jobs"; own != (k.decode == nil) {
			t.Errorf("%q: only defaults and jobs are decoded by config itself", k.Name)
		}
	}
}

// topSamples is a value for each top-level key that differs from what a
// file without the key gets.
var topSamples = map[string]string{
	"state_dir": "/nonexistent/state", "shutdown_grace": "5s", "defaults": "{kill_grace: 3s}",
	"lock_backend":    "{type: redis, url: 'redis://:${CRONVISOR_TOPKEYS_TEST}@localhost:6379/0'}",
	"history_backend": "{type: postgres, url: 'postgres://u:pw@h:5432/db'}",
	"history":         "{keep_runs: 5}", "metrics": "{listen: '127.0.0.1:9999'}",
	"console": "{read_only: true}", "durability": "process", "calendars": "{holidays: [2026-12-25]}", "resources": "{db: 2}",
	"jobs": "[{name: b, schedule: '@daily', command: x, timeout: 1m}]",
}

// configNotFromYAML are the exported fields of Config that no key sets:
// the path it was read from, its text, and what only LoadForReading
// reports.
var configNotFromYAML = []string{"Path", "Text", "UnsetEnv", "HistoryUnsetEnv"}

// topCoverage is TestJobKeysSetJobFields' check for the top level.
func topCoverage(t *testing.T, samples map[string]string) []string {
	t.Helper()
	parse := func(key, value string) reflect.Value {
		text := "jobs: [{name: a, schedule: '@hourly', command: [/bin/true], timeout: 1m}]\n"
		if key == "jobs" {
			text = ""
		}
		if key != "" {
			text += fmt.Sprintf("%s: %s\n", key, value)
		}
		cfg, ps := ParseAs("/nonexistent/jobs.yaml", []byte(text), 0, 0)
		for _, p := range ps {
			if !p.Warning {
				t.Fatalf("%s: %s", key, p)
			}
		}
		return reflect.ValueOf(*cfg)
	}
	plain := parse("", "")
	if diff := changed(plain, parse("", ""), ""); len(diff) > 0 {
		t.Fatalf("the same file parsed twice differs in %q: the check proves nothing", diff)
	}
	var out []string
	set := map[string]bool{}
	for _, k := range topKeys {
		value, ok := samples[k]
		if !ok {
			out = append(out, k+": no sample in topSamples")
			continue
		}
		fields := changed(plain, parse(k, value), "")
		if len(fields) == 0 {
			out = append(out, k+": decodes into no field of Config")
		}
		for _, f := range fields {
			set[f] = true
		}
	}
	for i := range plain.NumField() {
		if f := plain.Type().Field(i).Name; !set[f] && !slices.Contains(configNotFromYAML, f) {
			out = append(out, "Config."+f+": set by no key, and not in configNotFromYAML")
		}
	}
	slices.Sort(out)
	return out
}

// TestTopKeysSetConfigFields: every top-level key decodes into a field of
// Config, and every field is set by a key or listed as not from the file.
func TestTopKeysSetConfigFields(t *testing.T) {
	t.Setenv("CRONVISOR_TOPKEYS_TEST", "secret")
	if ps := topCoverage(t, topSamples); len(ps) > 0 {
		t.Fatalf("top-level keys and Config disagree:\n%s", strings.Join(ps, "\n"))
	}
	// The check must be able to fail: a key whose decode sets nothing,
	// and a key without a sample, are found.
	i := slices.Index(topKeys, "console")
	saved := topTable[i].decode
	topTable[i].decode = func(*decoder, *Config, entry) {}
	defer func() { topTable[i].decode = saved }()
	fewer := maps.Clone(topSamples)
	delete(fewer, "durability")
	want := []string{
		"Config.Console: set by no key, and not in configNotFromYAML",
		"Config.Durability: set by no key, and not in configNotFromYAML",
		"console: decodes into no field of Config",
		"durability: no sample in topSamples",
	}
	if got := topCoverage(t, fewer); !slices.Equal(got, want) {
		t.Errorf("with console decoding nothing and durability without a sample:\n%q\nwant\n%q", got, want)
	}
}
