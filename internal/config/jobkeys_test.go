package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// tableProblems lists what is wrong with a job key table: an index of the
// k constants without an entry, an entry without a doc or a decode, a
// name twice, a needs that names no key.
func tableProblems(table []jobKey) []string {
	var out []string
	names := make([]string, len(table))
	for i, k := range table {
		names[i] = k.Name
	}
	for i, k := range table {
		switch {
		case k.Name == "":
			out = append(out, fmt.Sprintf("index %d: no entry", i))
			continue
		case slices.Index(names, k.Name) != i:
			out = append(out, k.Name+": listed twice")
		case k.Doc == "" || strings.Contains(k.Doc, "\n"):
			out = append(out, k.Name+": doc is not one line")
		case k.decode == nil:
			out = append(out, k.Name+": no decode")
		case k.needs != "" && !slices.Contains(names, k.needs):
			out = append(out, k.Name+": needs "+k.needs+", which is not a key")
		}
	}
	return out
}

func TestJobTable(t *testing.T) {
	if ps := tableProblems(jobTable[:]); len(ps) > 0 {
		t.Fatalf("jobTable:\n%s", strings.Join(ps, "\n"))
	}
	// The check must be able to fail: a constant added without its
	// entry, and an entry without a decode, are both found.
	bad := jobTable
	bad[kIOWeight] = jobKey{}
	bad[kPing].decode = nil
	if got := tableProblems(bad[:]); len(got) != 2 {
		t.Errorf("a table missing an entry and a decode: %q, want both found", got)
	}
}

// orderProblems lists the keys order decodes before what they need, or
// not exactly once.
func orderProblems(names []string, keys []jobKey, order []int) []string {
	var out []string
	seen := make([]bool, len(keys))
	for at, k := range order {
		seen[k] = true
		if need := keys[k].needs; need != "" && !slices.Contains(order[:at], slices.Index(names, need)) {
			out = append(out, names[k]+" is decoded before "+need+", which it needs")
		}
	}
	if len(order) != len(keys) || slices.Contains(seen, false) {
		out = append(out, fmt.Sprintf("%v does not decode each key once", order))
	}
	return out
}

func TestDecodeOrder(t *testing.T) {
	if ps := orderProblems(jobKeys, jobTable[:], decodeOrder); len(ps) > 0 {
		t.Fatalf("decodeOrder:\n%s", strings.Join(ps, "\n"))
	}
	// The check must be able to fail: keys needing each other in a
	// circle cannot both come first.
	circle := jobTable
	circle[kTimezone].needs = "schedule"
	order := orderByNeeds(jobKeys, circle[:])
	if got := orderProblems(jobKeys, circle[:], order); len(got) != 1 {
		t.Errorf("schedule and timezone needing each other: %q, want one found", got)
	}
}

// keySamples is a value for each job key that differs from what a job
// without the key gets (the base job of keyEffects).
var keySamples = map[string]string{
	"name": "other", "schedule": `"@daily"`, "timezone": "UTC", "command": `"echo hi"`,
	"shell": "/bin/bash", "dir": "/tmp", "env": "{A: b}", "timeout": "none", "kill_grace": "3s",
	"overlap": "queue", "lock": "shared", "jitter": "5s", "catch_up": "1h", "enabled": "false",
	"on_lock_lost": "continue", "log_output": "false", "user": `"0"`, "group": `"0"`,
	"retries": "2", "retry_backoff": "1s", "retry_backoff_max": "1m", "retry_on": "[failed]",
	"warn_after": "1m", "warn_fast": "auto", "ping": "https://hc.example/abc", "ping_skips": "true",
	"notify": "[{on: [failure], url: 'https://hooks.example/x'}]", "io_weight": "200",
	"nice": "19", "ionice": "idle", "oom_score_adj": "1000", "nofile": "64", "nproc": "64",
	"core": "0", "memory_max": "1G", "memory_high": "512M", "cpu_max": "50%", "tasks_max": "10",
	"heartbeat_timeout": "30s", "skip_on": "[holidays]", "only_on": "holidays", "uses": "{db: 2}", "on_full": "wait",
	// max_wait is an error without on_full: wait.
	"max_wait": "5m\n    on_full: wait",
}

// moreSamples are further values of keys that set other fields than
// their keySamples value: a duration or auto.
var moreSamples = map[string]string{"warn_after": "auto", "warn_fast": "30s"}

// notFromYAML are the exported fields of Job that no key sets.
var notFromYAML = []string{}

// keyEffects parses a base job once alone and once per sample, written as
// root so that user, group and the limits are not refused, and returns the
// Job fields (Limits' by their own names) each key changed.
func keyEffects(t *testing.T, samples map[string]string) map[string][]string {
	t.Helper()
	base := map[string]string{"name": "a", "schedule": `"@hourly"`, "command": "[/bin/true]", "timeout": "1m"}
	parse := func(key, value string) reflect.Value {
		var b strings.Builder
		b.WriteString("calendars: {holidays: [2026-12-25]}\nresources: {db: 2}\njobs:\n  - ")
		for _, k := range []string{"name", "schedule", "command", "timeout"} {
			if k != key {
				fmt.Fprintf(&b, "%s: %s\n    ", k, base[k])
			}
		}
		if key != "" {
			fmt.Fprintf(&b, "%s: %s\n", key, value)
		}
		cfg, ps := ParseAs("/nonexistent/jobs.yaml", []byte(b.String()), 0, 0)
		for _, p := range ps {
			if !p.Warning {
				t.Fatalf("%s: %s", key, p)
			}
		}
		return reflect.ValueOf(cfg.Jobs[0])
	}
	plain := parse("", "")
	if diff := changed(plain, parse("", ""), ""); len(diff) > 0 {
		t.Fatalf("the same job parsed twice differs in %q: the check proves nothing", diff)
	}
	effects := map[string][]string{}
	for key, value := range samples {
		effects[key] = changed(plain, parse(key, value), "")
	}
	return effects
}

// changed lists the fields, Limits' inside it, that differ between a and b.
func changed(a, b reflect.Value, prefix string) []string {
	var out []string
	for i := range a.NumField() {
		f := a.Type().Field(i)
		switch {
		case !f.IsExported():
		case f.Type == reflect.TypeFor[Limits]():
			out = append(out, changed(a.Field(i), b.Field(i), f.Name+".")...)
		case !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()):
			out = append(out, prefix+f.Name)
		}
	}
	return out
}

// jobFieldNames lists Job's exported fields as changed names them.
func jobFieldNames() []string {
	v := reflect.ValueOf(Job{})
	var all []string
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() && f.Type == reflect.TypeFor[Limits]() {
			for j := range f.Type.NumField() {
				all = append(all, f.Name+"."+f.Type.Field(j).Name)
			}
		} else if f.IsExported() {
			all = append(all, f.Name)
		}
	}
	return all
}

// coverageProblems lists the keys without a sample or that set no field,
// and the fields of Job that no key sets and notFromYAML does not list.
func coverageProblems(t *testing.T, samples map[string]string) []string {
	var out []string
	for _, k := range jobKeys {
		if _, ok := samples[k]; !ok {
			out = append(out, k+": no sample in keySamples")
		}
	}
	set := map[string]bool{}
	for _, fields := range keyEffects(t, moreSamples) {
		for _, f := range fields {
			set[f] = true
		}
	}
	for key, fields := range keyEffects(t, samples) {
		if len(fields) == 0 {
			out = append(out, key+": decodes into no field of Job")
		}
		for _, f := range fields {
			set[f] = true
		}
	}
	for _, f := range jobFieldNames() {
		if !set[f] && !slices.Contains(notFromYAML, f) {
			out = append(out, "Job."+f+": set by no key, and not in notFromYAML")
		}
	}
	slices.Sort(out)
	return out
}

// TestJobKeysSetJobFields checks the table against Job: every key decodes
// into a field, and every field is set by a key or listed as not from
// jobs.yaml. A key added to Job and not to the table, or to the table
// with a decode that sets nothing, fails here.
func TestJobKeysSetJobFields(t *testing.T) {
	if ps := coverageProblems(t, keySamples); len(ps) > 0 {
		t.Fatalf("job keys and Job disagree:\n%s", strings.Join(ps, "\n"))
	}
	for k := range keySamples {
		if !isJobKey(k) {
			t.Errorf("keySamples has %q, which is not a job key", k)
		}
	}
	// The check must be able to fail: a key whose decode sets nothing
	// leaves its field unset, and a key without a sample is found.
	saved := jobTable[kPing].decode
	jobTable[kPing].decode = checkText
	defer func() { jobTable[kPing].decode = saved }()
	fewer := maps.Clone(keySamples)
	delete(fewer, "io_weight")
	want := []string{
		"Job.Limits.IOWeight: set by no key, and not in notFromYAML",
		"Job.Ping: set by no key, and not in notFromYAML",
		"io_weight: no sample in keySamples",
		"ping: decodes into no field of Job",
	}
	if got := coverageProblems(t, fewer); !slices.Equal(got, want) {
		t.Errorf("with ping decoding nothing and io_weight without a sample:\n%q\nwant\n%q", got, want)
	}
}
