package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestParseForReading: a reader resolves no secret it does not need and
// gets what could be read of a refused file, beside its problems; Parse
// still refuses both.
func TestParseForReading(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jobs.yaml")
	hook := "jobs:\n  - name: a\n    schedule: \"@hourly\"\n    command: x\n    timeout: 1m\n" +
		"    notify: [{on: [failure], url: http://h/x, headers: {Authorization: \"Bearer ${CV_TEST_UNSET_TOKEN}\"}}]\n"
	pg := "lock_backend: {type: postgres, url: \"postgres://u:${CV_TEST_UNSET_PW}@h:5432/db\"}\n"
	for _, tc := range []struct {
		name, file   string
		wantErr      string // the reader's first error, "" for none
		wantUnset    []string
		wantJobs     []string
		wantStateDir string
	}{
		{name: "header secret unset", file: hook, wantJobs: []string{"a"}, wantStateDir: filepath.Join(dir, ".cronvisor")},
		{name: "backend secret unset", file: pg + hook, wantUnset: []string{"CV_TEST_UNSET_PW"}, wantJobs: []string{"a"},
			wantStateDir: filepath.Join(dir, ".cronvisor")},
		{name: "bad schedule", file: "state_dir: st\n" + strings.Replace(hook, "@hourly", "61 * * * *", 1),
			wantErr: "jobs.yaml:4:15: ", wantJobs: []string{"a"}, wantStateDir: filepath.Join(dir, "st")},
		{name: "syntax error", file: "state_dir: 'my state'\njobs:\n  - name: a\n   bad: [\n",
			wantErr: "jobs.yaml:", wantStateDir: filepath.Join(dir, "my state")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ps := ParseForReading(path, []byte(tc.file))
			errs := Errors(ps)
			switch {
			case tc.wantErr == "" && len(errs) > 0:
				t.Fatalf("problems %v, want none", errs)
			case tc.wantErr != "" && (len(errs) == 0 || !strings.Contains(errs[0].String(), tc.wantErr)):
				t.Fatalf("problems %v, want one at %q", errs, tc.wantErr)
			}
			var names []string
			for _, j := range cfg.Jobs {
				names = append(names, j.Name)
			}
			if !slices.Equal(names, tc.wantJobs) || !slices.Equal(cfg.UnsetEnv, tc.wantUnset) || cfg.StateDir != tc.wantStateDir {
				t.Errorf("jobs %q, unset %q, state dir %q; want %q, %q, %q", names, cfg.UnsetEnv, cfg.StateDir,
					tc.wantJobs, tc.wantUnset, tc.wantStateDir)
			}
			if strict, _ := Parse(path, []byte(tc.file)); strict != nil {
				t.Errorf("Parse accepted what a reader only looks at")
			}
		})
	}
}
