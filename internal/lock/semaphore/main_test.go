package semaphore

import (
	"os"
	"path/filepath"
	"testing"

	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
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
	servers.Close()
	os.Exit(code)
}

// backend is one lock backend under test. settings prepares a namespace
// of the test's own (a state dir, a Redis, a database) and returns the
// job locks' settings on it.
type backend struct {
	name     string
	b        lock.Backend
	settings func(t *testing.T) lock.Settings
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

func fileSettings(t *testing.T) lock.Settings {
	return lock.Settings{LocksDir: filepath.Join(t.TempDir(), "locks"), InRun: locktest.InRun}
}

// eachBackend runs f for each backend with what opens a supervisor's
// semaphores on a namespace of the test's own.
func eachBackend(t *testing.T, f func(t *testing.T, open func(map[string]int) Semaphores)) {
	eachSettings(t, func(t *testing.T, b lock.Backend, s lock.Settings) { f(t, opener(t, b, s)) })
}

// eachSettings runs f for each backend with its settings.
func eachSettings(t *testing.T, f func(t *testing.T, b lock.Backend, s lock.Settings)) {
	for _, b := range backendsUnderTest() {
		t.Run(b.name, func(t *testing.T) { f(t, b.b, b.settings(t)) })
	}
}
