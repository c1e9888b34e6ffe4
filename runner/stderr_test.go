package runner

import (
	"strings"
	"testing"

	"cronvisor/internal/base/run"
)

func TestLastStderrReason(t *testing.T) {
	code := func(c int) *int { return &c }
	for _, tc := range []struct {
		name   string
		output [][2]string // stream, lines
		f      run.End
		want   string
	}{
		{"last line of the last chunk", [][2]string{{"stderr", "dialing\nconnection refused\n"}, {"stdout", "bye"}},
			run.End{Outcome: run.Failed, ExitCode: code(3)}, `exit 3: last stderr: "connection refused"`},
		{"blank lines skipped", [][2]string{{"stderr", "boom"}, {"stderr", "  \n"}},
			run.End{Outcome: run.Failed, ExitCode: code(1)}, `exit 1: last stderr: "boom"`},
		{"signal reason kept", [][2]string{{"stderr", "killed here"}},
			run.End{Outcome: run.Failed, ExitCode: code(137), Reason: "ended by signal SIGKILL"},
			`ended by signal SIGKILL: last stderr: "killed here"`},
		{"no stderr: reason unchanged", [][2]string{{"stdout", "only out"}},
			run.End{Outcome: run.Failed, ExitCode: code(2)}, ""},
		{"ok runs untouched", [][2]string{{"stderr", "warning: x"}},
			run.End{Outcome: run.OK, ExitCode: code(0)}, ""},
		{"long line clipped", [][2]string{{"stderr", strings.Repeat("é", 150)}},
			run.End{Outcome: run.Failed, ExitCode: code(1)}, `exit 1: last stderr: "` + strings.Repeat("é", 100) + `..."`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l lastStderr
			for _, o := range tc.output {
				l.see(o[0], o[1])
			}
			f := tc.f
			l.annotate(&f)
			if f.Reason != tc.want {
				t.Errorf("reason = %q, want %q", f.Reason, tc.want)
			}
		})
	}
}
