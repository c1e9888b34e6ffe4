package fleet

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"cronvisor/internal/harness/sqltest"
)

// pgServer is the package's one PostgreSQL server.
var pgServer = sqltest.NewShared("f")

func TestMain(m *testing.M) {
	code := m.Run()
	pgServer.Close()
	os.Exit(code)
}

// postgres is the package's server, started by its first caller.
func postgres(t *testing.T) *sqltest.Postgres { return pgServer.Postgres(t) }

// newDB is a fresh database of the test's own: its URL and an
// administrator's pool on it.
func newDB(t *testing.T) (string, *sql.DB) {
	t.Helper()
	p := postgres(t)
	url := p.URL(pgServer.NewDB(t, p.CreateDB))
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return url, db
}

// openStore is host's store on url, with its tables.
func openStore(t *testing.T, url, host string) *Store {
	t.Helper()
	s, err := Open(url, host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.EnsureSchema(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

// mustExec runs a statement on db.
func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// insertRunning writes a running row as a host's shipper would.
func insertRunning(t *testing.T, db *sql.DB, runID, job, host string, started time.Time) {
	t.Helper()
	mustExec(t, db, `INSERT INTO cronvisor_runs (run_id, job, host, outcome, at, scheduled_at, started_at, pid, supervisor_pid)
		VALUES ($1, $2, $3, 'running', $4, $4, $4, 4242, 4241)`, runID, job, host, started.UnixNano())
}

// silence makes host's last beat ago old by the server's clock.
func silence(t *testing.T, db *sql.DB, host string, ago time.Duration) {
	t.Helper()
	mustExec(t, db, `UPDATE cronvisor_hosts SET last_beat = now() - make_interval(secs => $2::float8) WHERE host = $1`,
		host, ago.Seconds())
}

// outcomeOf reads a run's outcome and reason from the shared history.
func outcomeOf(t *testing.T, db *sql.DB, runID string) (string, string) {
	t.Helper()
	var outcome, reason string
	if err := db.QueryRowContext(t.Context(), `SELECT outcome, reason FROM cronvisor_runs WHERE run_id = $1`, runID).
		Scan(&outcome, &reason); err != nil {
		t.Fatalf("read run %s: %v", runID, err)
	}
	return outcome, reason
}
