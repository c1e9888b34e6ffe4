package semaphore

import (
	"os"
	"path/filepath"
	"testing"

	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
)

// TestMain makes the test process a child subreaper, as the lock
// backends' tests do, so that a killed helper's orphans are reaped here,
// and stops the database servers the tests started.
func TestMain(m *testing.M) {
	if os.Getenv(holdEnv) != "" {
		holdAndBlock() // a helper process of TestNetworkSlotFreedWhenItsHolderDies
	}
	locktest.BecomeSubreaper()
	code := m.Run()
	servers.close()
	os.Exit(code)
}

// backend is one lock backend under test. open prepares a namespace of
// the test's own (a state dir, a Redis, a database) and returns what
// opens a supervisor's semaphores on it, closed when the test ends.
type backend struct {
	name string
	open func(t *testing.T) func(sizes map[string]int) Semaphores
}

// opener opens semaphores on b with s, closed when the test ends.
func opener(t *testing.T, b lock.Backend, s lock.Settings) func(map[string]int) Semaphores {
	return func(sizes map[string]int) Semaphores {
		t.Helper()
		sm, err := Open(b, s, sizes)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = sm.(*sems).Close() })
		return sm
	}
}

func fileBackend() backend {
	return backend{name: "file", open: func(t *testing.T) func(map[string]int) Semaphores {
		dir := t.TempDir()
		return opener(t, file.Backend, lock.Settings{LocksDir: filepath.Join(dir, "locks"), InRun: locktest.InRun})
	}}
}

// eachBackend runs f for each backend.
func eachBackend(t *testing.T, f func(t *testing.T, open func(map[string]int) Semaphores)) {
	for _, b := range backendsUnderTest() {
		t.Run(b.name, func(t *testing.T) { f(t, b.open(t)) })
	}
}
