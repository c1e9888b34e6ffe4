package cli

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/ctl"
)

// namedDaemon is a daemon of the jobs j and k that counts how its jobs
// were asked for, and reports refused as its last refused reload.
type namedDaemon struct {
	countingDaemon
	all, named atomic.Int64
	refused    []string
}

func (d *namedDaemon) Jobs(context.Context) ([]ctl.JobStatus, error) {
	d.all.Add(1)
	return []ctl.JobStatus{{Name: "j", Schedule: "@hourly", State: ctl.StateIdle, Enabled: true},
		{Name: "k", Schedule: "@hourly", State: ctl.StateIdle, Enabled: true}}, nil
}

func (d *namedDaemon) JobsNamed(_ context.Context, names []string) ([]ctl.JobStatus, error) {
	d.named.Add(1)
	var out []ctl.JobStatus
	for _, n := range names {
		if n == "j" || n == "k" {
			out = append(out, ctl.JobStatus{Name: n, Schedule: "@hourly", State: ctl.StateIdle, Enabled: true})
		}
	}
	return out, nil
}

func (d *namedDaemon) Daemon(context.Context) (ctl.DaemonStatus, error) {
	return ctl.DaemonStatus{Refused: d.refused}, nil
}

// TestStatusJobAsksForItsJobsAlone (issue 39): beside a daemon, `status
// JOB` asks for the named jobs only and reads only the file's settings:
// a bad job elsewhere in the list is not read, the settings' problem or
// else the daemon's refused reload is named, and a name the daemon does
// not know takes the whole way (every job, the nearest names offered).
func TestStatusJobAsksForItsJobsAlone(t *testing.T) {
	const badK = "  - name: k\n    schedule: \"61 * * * *\"\n    command: \"true\"\n    timeout: 1m\n"
	const goodJ = "  - name: j\n    schedule: \"@hourly\"\n    command: \"true\"\n    timeout: 1m\n"
	tests := []struct {
		name, settings, job string
		refused             []string
		code                int
		wantStderr          string // "": no problem named
		wantAll, wantNamed  int64
	}{
		{"a bad job elsewhere is not read", "", "j", nil, 0, "", 0, 1},
		{"the daemon's refused reload is named", "", "j", []string{"jobs.yaml:7:15: bad schedule", "another"}, 0,
			"cronvisor: jobs.yaml:7:15: bad schedule (the file is refused, 2 problems in all: cronvisor validate", 0, 1},
		{"a settings problem is named", "shutdown_grace: soon\n", "j", nil, 0, "shutdown_grace", 0, 1},
		{"an unknown name takes the whole way", "", "jj", nil, 2, `no job "jj"`, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "st") // a socket path has at most 107 bytes
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			config, stateDir := filepath.Join(dir, "jobs.yaml"), filepath.Join(dir, ".cronvisor")
			if err := os.WriteFile(config, []byte(tc.settings+"jobs:\n"+goodJ+badK), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(stateDir, 0o700); err != nil {
				t.Fatal(err)
			}
			d := &namedDaemon{refused: tc.refused}
			serveNamed(t, stateDir, d)
			code, stdout, stderr := executeOut(t, []string{"--config", config, "status", tc.job})
			if code != tc.code || tc.code == 0 && !strings.Contains(stdout, tc.job+" ") {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %s's row", code, stdout, stderr, tc.code, tc.job)
			}
			if named := strings.Contains(stderr, "cronvisor: ") && strings.Contains(stderr, "refused"); tc.wantStderr == "" && named ||
				tc.wantStderr != "" && !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr %q; want %q", stderr, tc.wantStderr)
			}
			if all, n := d.all.Load(), d.named.Load(); all != tc.wantAll || n != tc.wantNamed {
				t.Errorf("asked for every job %d times and named jobs %d times; want %d and %d", all, n, tc.wantAll, tc.wantNamed)
			}
		})
	}
}

// serveNamed serves d on the state dir's socket until the test ends.
func serveNamed(t *testing.T, stateDir string, d *namedDaemon) {
	t.Helper()
	ln, err := ctl.Listen(statedir.Dir(stateDir).Socket())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Serve(ctx, ln, d, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving the test socket: %v", err)
		}
	})
}

// executeOut is execute with stdout.
func executeOut(t *testing.T, args []string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Execute(args, &out, &errb) }()
	select {
	case code = <-done:
		return code, out.String(), errb.String()
	case <-time.After(20 * time.Second):
		t.Fatalf("%q did not end within 20s", args)
		return 0, "", ""
	}
}
