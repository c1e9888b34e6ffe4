package config

import (
	"strings"
	"testing"

	"cronvisor/internal/base/run"
)

// TestDurability (issue 29): durability is machine unless the file says
// process; any other value is an error naming the file, the line and
// column of the value, and the value.
func TestDurability(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      run.Durability
		at, msg   string // the one error, "" for none
	}{
		{"absent", y("jobs: []"), run.DurabilityMachine, "", ""},
		{"machine", y("durability: machine", "jobs: []"), run.DurabilityMachine, "", ""},
		{"process", y("durability: process", "jobs: []"), run.DurabilityProcess, "", ""},
		{"unknown word", y("jobs: []", "durability: disk"), "", "2:13", `durability: "disk" is not one of machine, process`},
		{"capitalised", y("durability: Process", "jobs: []"), "", "1:13", `(did you mean "process"?)`},
		{"empty", y("durability: ''", "jobs: []"), "", "1:13", "durability is empty"},
		{"a mapping", y("durability: {mode: process}", "jobs: []"), "", "1:13", "durability: expected a string"},
		{"a bool", y("durability: true", "jobs: []"), "", "1:13", `"true" is not one of machine, process`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, problems := Parse("/tmp/jobs.yaml", []byte(tc.src))
			errs := Errors(problems)
			if tc.msg == "" {
				if len(errs) > 0 {
					t.Fatalf("problems: %v", errs)
				}
				if cfg.Durability != tc.want || cfg.Durability.Syncs() != (tc.want == run.DurabilityMachine) {
					t.Errorf("durability = %q (syncs %v), want %q", cfg.Durability, cfg.Durability.Syncs(), tc.want)
				}
				return
			}
			if cfg != nil {
				t.Errorf("Parse returned a config despite the error")
			}
			if len(errs) != 1 || at(errs[0]) != tc.at || !strings.Contains(errs[0].Message, tc.msg) {
				t.Fatalf("problems %v, want one at %s saying %q", errs, tc.at, tc.msg)
			}
			if s := errs[0].String(); !strings.HasPrefix(s, "/tmp/jobs.yaml:"+tc.at+":") {
				t.Errorf("problem %q does not start with the file, line and column", s)
			}
		})
	}
}
