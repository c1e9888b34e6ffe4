package runner

import (
	"context"
	"fmt"
	"os"
	"testing"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// TestFireAsAnotherUser: a job with RunAs runs with that uid, gid and
// supplementary groups and cron's HOME, USER, LOGNAME and SHELL; its env
// still wins. It needs root (CI runs as root).
func TestFireAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test switches users and needs root (CI runs as root)")
	}
	s, ev := newTestSupervisor(t, t.TempDir())
	j := shJob("as_nobody", `echo "$(id -u) $(id -g) $(id -G)|$HOME|$USER|$LOGNAME|$SHELL|$EXTRA"`)
	j.RunAs = &config.Account{User: "nobody", Home: "/nonexistent", UID: 65534, GID: 65533, Groups: []uint32{65533, 4242}}
	j.Env = map[string]string{"EXTRA": "x", "LOGNAME": "from-env"}
	f := s.Fire(context.Background(), j, slotAt(0), false)
	if f.Outcome != run.OK {
		t.Fatalf("outcome %s (%s)", f.Outcome, f.Reason)
	}
	want := fmt.Sprintf("65534 65533 65533 4242|/nonexistent|nobody|from-env|%s|x", j.Shell)
	if out := ev.output(f.RunID); len(out) != 1 || out[0] != want {
		t.Errorf("the job saw %q, want %q", out, want)
	}
}
