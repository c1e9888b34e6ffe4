package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mondayNoon is the reference instant for lint cases: no DST change is near.
func mondayNoon() time.Time { return time.Date(2025, 1, 6, 12, 0, 0, 0, time.UTC) }

func TestLint(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		job  []string // lines after "jobs:" (line 1); the job starts on line 2
		at   string   // "" when no warning is expected
		msg  string
	}{
		{"clean", []string{"  - name: a", "    schedule: '*/5 * * * *'", "    command: x", "    timeout: 1m"}, "", ""},
		{"timeout none", []string{"  - name: a", "    schedule: '@every 1m'", "    command: x", "    timeout: none"}, "", ""},
		{"timeout equals interval", []string{"  - name: a", "    schedule: '*/5 * * * *'", "    command: x", "    timeout: 5m"},
			"5:14", "timeout 5m is not shorter than the 5m between fires: a run that needs its whole timeout makes the next fire skip"},
		{"timeout over interval queue", []string{"  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 2h", "    overlap: queue"},
			"5:14", "queue up back to back"},
		{"timeout over interval allow", []string{"  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 2h", "    overlap: allow"}, "", ""},
		{"weekday gap", []string{"  - name: a", "    schedule: '0 9 * * 1-5'", "    command: x", "    timeout: 25h"},
			"5:14", "the 24h between fires"},
		{"jitter over interval", []string{"  - name: a", "    schedule: '* * * * *'", "    command: x", "    timeout: 30s", "    jitter: 90s"},
			"6:13", "jitter 1m30s is not shorter than the 1m between fires"},
		{"never fires", []string{"  - name: a", "    schedule: '0 0 30 2 *'", "    command: x", "    timeout: 1m"},
			"3:15", "never fires"},
		{"missing dir", []string{"  - name: a", "    schedule: '@hourly'", "    command: x", "    dir: gone", "    timeout: 1m"},
			"5:10", "gone does not exist"},
		{"dir is a file", []string{"  - name: a", "    schedule: '@hourly'", "    command: x", "    dir: file", "    timeout: 1m"},
			"5:10", "is not a directory"},
		{"missing shell", []string{"  - name: a", "    schedule: '@hourly'", "    command: x", "    shell: /nonexistent/sh", "    timeout: 1m"},
			"5:12", "shell /nonexistent/sh is not an executable file"},
		{"shell unused by argv", []string{"  - name: a", "    schedule: '@hourly'", "    command: [x]", "    timeout: 1m"}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := y(append([]string{"jobs:"}, tc.job...)...)
			path := filepath.Join(dir, "jobs.yaml")
			cfg, ps := Parse(path, []byte(src))
			if cfg == nil {
				t.Fatalf("Parse:\n%s", lines(ps))
			}
			got := Lint(cfg, mondayNoon())
			if tc.at == "" {
				if len(got) != 0 {
					t.Errorf("want no warnings, got:\n%s", lines(got))
				}
				return
			}
			if len(got) != 1 || !got[0].Warning || at(got[0]) != tc.at || !strings.Contains(got[0].Message, tc.msg) ||
				got[0].Path != path {
				t.Errorf("got:\n%swant one warning at %s: ...%s...", lines(got), tc.at, tc.msg)
			}
		})
	}
}

func TestShort(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{2 * time.Hour, "2h"},
		{90 * time.Minute, "1h30m"},
		{5 * time.Minute, "5m"},
		{90 * time.Second, "1m30s"},
		{time.Hour + time.Second, "1h0m1s"},
		{500 * time.Millisecond, "500ms"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			if got := short(tc.d); got != tc.want {
				t.Errorf("short(%v) = %q, want %q", tc.d, got, tc.want)
			}
		})
	}
}
