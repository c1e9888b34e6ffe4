package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The SQL backends' dsn and url expand ${VAR}; the variables become
// secrets of the supervisor's, which jobs do not inherit.
func TestLoadSQLBackends(t *testing.T) {
	t.Setenv("CV_TEST_DB_PASSWORD", "s3cret")
	cases := []struct {
		name, backend string
		want          LockBackend
	}{
		{"mysql", "{type: mysql, dsn: 'cron:${CV_TEST_DB_PASSWORD}@tcp(127.0.0.1:3306)/app', prefix: 'team-a:'}",
			LockBackend{Type: "mysql", URL: "cron:s3cret@tcp(127.0.0.1:3306)/app", Prefix: "team-a:"}},
		{"postgres", "{type: postgres, url: 'postgres://cron:${CV_TEST_DB_PASSWORD}@127.0.0.1:5432/app'}",
			LockBackend{Type: "postgres", URL: "postgres://cron:s3cret@127.0.0.1:5432/app"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs.yaml")
			src := y("lock_backend: "+tc.backend, "jobs:", "  - {name: a, schedule: '@hourly', command: x, timeout: 1m}")
			if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, ps := Load(path)
			if cfg == nil || len(ps) != 0 {
				t.Fatalf("Load: problems:\n%s", lines(ps))
			}
			got := cfg.LockBackend
			got.TTL, got.Line, got.Col = 0, 0, 0
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("lock_backend = %+v, want %+v", got, tc.want)
			}
			if !reflect.DeepEqual(cfg.SecretEnv, []string{"CV_TEST_DB_PASSWORD"}) {
				t.Errorf("SecretEnv = %v, want the password's variable", cfg.SecretEnv)
			}
		})
	}
}
