package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadSettingsForReading: the settings of a file whose jobs list can
// be cut are read without its jobs, and a problem in a job is not
// reported; a list that cannot be cut is decoded whole.
func TestLoadSettingsForReading(t *testing.T) {
	tests := []struct {
		name, jobs string
		wantJobs   int
	}{
		{"cut list", "jobs:\n  - name: a\n    schedule: \"61 * * * *\"\n    command: \"true\"\n", 0},
		{"flow list decoded whole", "jobs: [{name: a, schedule: \"@hourly\", command: \"true\", timeout: 1m}]\n", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs.yaml")
			data := "state_dir: /var/lib/x\nlock_backend:\n  type: file\n" + tc.jobs
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, problems := LoadSettingsForReading(path)
			if cfg == nil {
				t.Fatalf("no config: %v", problems)
			}
			if cfg.StateDir != "/var/lib/x" || len(cfg.Jobs) != tc.wantJobs {
				t.Errorf("state dir %q, %d jobs; want /var/lib/x, %d", cfg.StateDir, len(cfg.Jobs), tc.wantJobs)
			}
			if len(Errors(problems)) != 0 {
				t.Errorf("problems %v; want none (the job's bad schedule is not read)", problems)
			}
		})
	}
	t.Run("a settings problem is reported", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "jobs.yaml")
		data := "state_dir: s\nshutdown_grace: soon\njobs:\n  - name: a\n    schedule: \"@hourly\"\n    command: \"true\"\n"
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, problems := LoadSettingsForReading(path)
		if errs := Errors(problems); cfg == nil || len(errs) != 1 || !strings.Contains(errs[0].String(), "shutdown_grace") {
			t.Errorf("config %v, problems %v; want one about shutdown_grace", cfg != nil, problems)
		}
	})
}
