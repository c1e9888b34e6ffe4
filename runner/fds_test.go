package runner

import (
	"strings"
	"testing"

	"cronvisor/internal/base/run"
	"cronvisor/internal/proc"
)

// fdsScript prints the job's shell's own descriptors (ls is forked with the
// shell's stdout: the shell opens nothing for it) and, if it has an fd 3,
// whether a write through it works.
const fdsScript = `ls -1 /proc/$$/fd; if [ -e /proc/$$/fd/3 ]; then ` +
	`if echo x >&3; then echo wrote; else echo refused; fi 2>/dev/null; fi`

// TestJobDescriptorsByBackend: what a job's own process has open under
// each kind of lock. The file backend gives fds 0-2 and the lock as fd 3,
// read-only; a lease that nothing of the run holds (Redis, MySQL,
// PostgreSQL) gives 0-2 only, fd 3 closed. Every run has its heartbeat
// pipe as fd 4. The test process first does what main does,
// so that descriptors left open by whatever started `go test` do not
// count.
func TestJobDescriptorsByBackend(t *testing.T) {
	if err := proc.CloseInheritedOnExec(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		sup  func(t *testing.T) (*Supervisor, *events)
		want string
	}{
		{"file", func(t *testing.T) (*Supervisor, *events) {
			return newTestSupervisor(t, t.TempDir())
		}, "0 1 2 3 4 refused"},
		{"tethered (Redis, SQL)", func(t *testing.T) (*Supervisor, *events) {
			s, ev, _ := newTetheredSupervisor(t)
			return s, ev
		}, "0 1 2 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ev := tc.sup(t)
			f := recv(t, fireAsync(s, shJob("fds", fdsScript), slotAt(0)))
			if f.Outcome != run.OK {
				t.Fatalf("outcome %s (%s), want ok", f.Outcome, f.Reason)
			}
			if got := strings.Join(strings.Fields(strings.Join(ev.output(f.RunID), "\n")), " "); got != tc.want {
				t.Errorf("the job had %q, want %q", got, tc.want)
			}
		})
	}
}
