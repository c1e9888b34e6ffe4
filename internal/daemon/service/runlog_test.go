package service

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/ctl"
)

func TestReadRunLog(t *testing.T) {
	dir := t.TempDir()
	p := statedir.Dir(dir).RunLog("sync", "r1")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("stdout | a\nstderr | b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, job, run string
		want           []string
		wantErr        error
	}{
		{name: "a saved log, stream tags kept", job: "sync", run: "r1", want: []string{"stdout | a", "stderr | b"}},
		{name: "no log is ErrNoLog", job: "sync", run: "r2", wantErr: ctl.ErrNoLog},
		{name: "a run id with a slash is a bad request", job: "sync", run: "../r1", wantErr: ctl.ErrBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadRunLog(dir, tc.job, tc.run)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if !slices.Equal(got.Lines, tc.want) || (err == nil && (got.Job != tc.job || got.RunID != tc.run)) {
				t.Errorf("ReadRunLog = %+v, want lines %q", got, tc.want)
			}
		})
	}
}
