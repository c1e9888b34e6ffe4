package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// history_backend's url expands ${VAR} as lock_backend's does: the
// variables are the supervisor's secrets, and a command that only reads
// leaves the url empty and names them.
func TestHistoryBackend(t *testing.T) {
	t.Setenv("CV_TEST_HIST_PW", "s3cret")
	cases := []struct {
		name, src  string
		reading    bool
		want       HistoryBackend
		wantSecret []string
		wantUnset  []string
	}{
		{"absent", "", false, HistoryBackend{}, nil, nil},
		{"sqlite", "history_backend: {type: sqlite}", false, HistoryBackend{Type: HistoryLocal}, nil, nil},
		{"postgres", "history_backend: {type: postgres, url: 'postgres://cron:${CV_TEST_HIST_PW}@127.0.0.1:5432/fleet'}", false,
			HistoryBackend{Type: HistoryPostgres, URL: "postgres://cron:s3cret@127.0.0.1:5432/fleet"}, []string{"CV_TEST_HIST_PW"}, nil},
		{"reading, a variable unset", "history_backend: {type: postgres, url: 'postgres://cron:${CV_TEST_HIST_UNSET}@h/fleet'}", true,
			HistoryBackend{Type: HistoryPostgres}, nil, []string{"CV_TEST_HIST_UNSET"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs.yaml")
			src := y(tc.src, "jobs:", "  - {name: a, schedule: '@hourly', command: x, timeout: 1m}")
			if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			load := Load
			if tc.reading {
				load = LoadForReading
			}
			cfg, ps := load(path)
			if cfg == nil || len(Errors(ps)) != 0 {
				t.Fatalf("load: problems:\n%s", lines(ps))
			}
			got := cfg.HistoryBackend
			got.Line, got.Col = 0, 0
			if got != tc.want {
				t.Errorf("history_backend = %+v, want %+v", got, tc.want)
			}
			if !slices.Equal(cfg.SecretEnv, tc.wantSecret) || !slices.Equal(cfg.HistoryUnsetEnv, tc.wantUnset) || len(cfg.UnsetEnv) != 0 {
				t.Errorf("SecretEnv %v, HistoryUnsetEnv %v, UnsetEnv %v; want %v, %v, none",
					cfg.SecretEnv, cfg.HistoryUnsetEnv, cfg.UnsetEnv, tc.wantSecret, tc.wantUnset)
			}
		})
	}
}
