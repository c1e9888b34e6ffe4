package config

import (
	"strings"
	"testing"
)

// TestConsoleReadOnly (issue 25): console: {read_only: true} opens every
// console read-only; a bad value or key is an error at its line and column.
func TestConsoleReadOnly(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      bool
		at, msg   string // the one error, "" for none
	}{
		{"absent", y("jobs: []"), false, "", ""},
		{"on", y("console: {read_only: true}", "jobs: []"), true, "", ""},
		{"off", y("console:", "  read_only: false", "jobs: []"), false, "", ""},
		{"not a bool", y("console:", "  read_only: yes", "jobs: []"), false, "2:14", "console.read_only: expected true or false"},
		{"unknown key", y("console:", "  readonly: true", "jobs: []"), false, "2:3", `unknown key "readonly"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, problems := Parse("/tmp/jobs.yaml", []byte(tc.src))
			errs := Errors(problems)
			if tc.msg == "" {
				if len(errs) > 0 {
					t.Fatalf("problems: %v", errs)
				}
				if cfg.Console.ReadOnly != tc.want {
					t.Errorf("console.read_only = %v, want %v", cfg.Console.ReadOnly, tc.want)
				}
				return
			}
			if len(errs) != 1 || at(errs[0]) != tc.at || !strings.Contains(errs[0].Message, tc.msg) {
				t.Errorf("problems %v, want one at %s saying %q", errs, tc.at, tc.msg)
			}
		})
	}
}
