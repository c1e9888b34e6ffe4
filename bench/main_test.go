package bench

import (
	"context"
	"os"
	"testing"

	"cronvisor/internal/proc"
)

// TestMain sets the process up as the daemon does: a child subreaper with
// its reaper, so that a run's processes are found among its descendants.
func TestMain(m *testing.M) {
	if err := proc.EnableSubreaper(); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	proc.StartReaper(ctx)
	code := m.Run()
	cancel()
	os.Exit(code)
}
