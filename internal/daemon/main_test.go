package daemon

import (
	"os"
	"testing"

	"cronvisor/internal/proc"
)

// TestMain makes this test binary the keeper of its daemons' runs, as
// the cronvisor binary is: a keeper is this executable re-executed.
func TestMain(m *testing.M) {
	if proc.IsKeeper(os.Args) {
		os.Exit(proc.KeeperMain(os.Args[1:], nil))
	}
	os.Exit(m.Run())
}
