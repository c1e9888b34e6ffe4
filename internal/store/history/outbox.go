package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"cronvisor/internal/base/run"
)

// The outbox of the fleet's shared history (history_backend: postgres).
// While shipping is on, two triggers add a row to ship for every insert
// and update of runs, in the write's own transaction: a record is never
// committed without its shipment, whichever process wrote it (the daemon,
// `cronvisor run`, recovery). The shipper reads the pending rows, sends
// the runs as they are now, and deletes what it sent. With shipping off
// the triggers do not exist, so a host without a fleet pays nothing on
// its write path.
const (
	shipInsertTrigger = `CREATE TRIGGER IF NOT EXISTS runs_ship_insert AFTER INSERT ON runs
	BEGIN INSERT INTO ship (run_id) VALUES (NEW.run_id); END`
	shipUpdateTrigger = `CREATE TRIGGER IF NOT EXISTS runs_ship_update AFTER UPDATE ON runs
	BEGIN INSERT INTO ship (run_id) VALUES (NEW.run_id); END`
	shipOnSQL  = `SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'runs_ship_insert'`
	shipAllSQL = `INSERT INTO ship (run_id) SELECT run_id FROM runs ORDER BY id`
)

// What SetShipping asked, for a file opened later.
const (
	shipUnset = iota
	shipOn
	shipOff
)

// Shipment is a run to ship: the record as it is now, and the newest
// outbox row that asked for it.
type Shipment struct {
	Seq    int64
	Record run.Record
}

// SetShipping turns the outbox on or off. Turning it on creates the
// triggers and, when they did not exist yet, puts every record already
// kept in the outbox, so that the past reaches the shared store too;
// turning it on again is a no-op. Turning it off drops the triggers and
// empties the outbox.
func (s *Store) SetShipping(ctx context.Context, on bool) error {
	want := int32(shipOff)
	if on {
		want = shipOn
	}
	if s.shipping.Swap(want) == want && s.h.Load() != nil {
		return nil
	}
	h, done, err := s.writer() // an unopened store that opens applies it there
	if err != nil {
		return err
	}
	defer done()
	if err := h.ship(ctx, on); err != nil {
		return fmt.Errorf("history: turn shipping %s: %w", onOff(on), classify(err))
	}
	return nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// ship creates or drops the outbox's triggers on h, in one transaction.
func (h *handle) ship(ctx context.Context, on bool) error {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	stmts := []string{`DROP TRIGGER IF EXISTS runs_ship_insert`, `DROP TRIGGER IF EXISTS runs_ship_update`, `DELETE FROM ship`}
	if on {
		var n int
		if err := tx.QueryRowContext(ctx, shipOnSQL).Scan(&n); err != nil {
			return err
		}
		stmts = []string{shipInsertTrigger, shipUpdateTrigger}
		if n == 0 {
			stmts = append(stmts, shipAllSQL)
		}
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Pending returns up to limit outbox rows, oldest first, as shipments:
// one per run (the newest row asking for it), with the run's record as it
// is now. last is the newest row read, for Shipped: a row whose run has
// been pruned since yields no shipment but is covered by last. last is 0
// when the outbox is empty.
func (s *Store) Pending(ctx context.Context, limit int) (ships []Shipment, last int64, err error) {
	db, err := s.reader()
	if err != nil {
		return nil, 0, err
	}
	rows, err := db.QueryContext(ctx, `SELECT seq, run_id FROM ship ORDER BY seq LIMIT ?`, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("history: outbox: %w", err)
	}
	seqOf := map[string]int64{}
	var ids []string
	for rows.Next() {
		var seq int64
		var id string
		if err := rows.Scan(&seq, &id); err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("history: outbox: %w", err)
		}
		if _, ok := seqOf[id]; !ok {
			ids = append(ids, id)
		}
		seqOf[id], last = seq, seq
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("history: outbox: %w", err)
	}
	recs, err := s.byRunID(ctx, ids)
	if err != nil {
		return nil, 0, err
	}
	for _, id := range ids {
		if r, ok := recs[id]; ok {
			ships = append(ships, Shipment{Seq: seqOf[id], Record: r})
		}
	}
	return ships, last, nil
}

// Shipped deletes the outbox rows up to and including seq: their runs
// have reached the shared store as they were when Pending read them (a
// later write of a run has a later row).
func (s *Store) Shipped(ctx context.Context, seq int64) error {
	_, err := s.exec(ctx, "outbox", `DELETE FROM ship WHERE seq <= ?`, seq)
	return err
}

// Outbox counts the outbox rows still to ship.
func (s *Store) Outbox(ctx context.Context) (int, error) {
	db, err := s.reader()
	if err != nil {
		return 0, err
	}
	var n int
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM ship`).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("history: outbox: %w", err)
	}
	return n, nil
}
