package sql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// The slot ledger of the SQL backends: cronvisor_slots has one row per
// slot claimed under a lock by a job, with the fencing token of the lease
// that claimed it and the slot's outcome ("running" from the claim until
// the run's end sets it; "missed" for slots that passed while no host
// ran, one row standing for the slots from its slot_ns through
// through_ns). A job's cursor is its newest row's slot, or that row's
// through_ns when later: a claim is refused at or before it, so rows
// after a missed row are always past what it covers, and the newest row
// by slot_ns carries the cursor.

var (
	_ lock.SlotLedger    = (*sqlLocker)(nil)
	_ lock.OutcomeSetter = (*sqlLease)(nil)
)

// outcomeMissed is the ledger's outcome of a missed claim.
const outcomeMissed = "missed"

// ledgerRow is a job's newest row in cronvisor_slots.
type ledgerRow struct {
	slot, through int64
	runID, host   string
	since         string
	outcome       string
}

// cursor is the newest slot the row covers.
func (r ledgerRow) cursor() int64 { return max(r.slot, r.through) }

// record is the row as a lock record naming who claimed the slot.
func (r ledgerRow) record(job string) lock.Record {
	return lock.Record{Holder: run.Holder{Job: job, RunID: r.runID, Host: r.host, Since: parseTime(r.since)},
		Slot: timeFromNS(r.slot)}
}

// newestRow reads the job's newest row under full; false when none.
func (l *sqlLocker) newestRow(ctx context.Context, q querier, full, job string) (ledgerRow, bool, error) {
	var r ledgerRow
	err := q.QueryRowContext(ctx, l.d.rebind(`SELECT slot_ns, through_ns, run_id, host, since, outcome
		FROM cronvisor_slots WHERE name = ? AND job = ? ORDER BY slot_ns DESC LIMIT 1`), full, job).
		Scan(&r.slot, &r.through, &r.runID, &r.host, &r.since, &r.outcome)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// writeClaim is the body of Acquire's transaction: with CheckSlot, the
// refusal of a slot at or before the job's cursor; the holder record and
// its fencing token; with CheckSlot, the slot's row carrying that token.
func (l *sqlLocker) writeClaim(ctx context.Context, tx *sql.Tx, req lock.Request, full string, h lock.Record, conn int64) (int64, error) {
	if req.CheckSlot {
		if err := l.checkSlot(ctx, tx, req.Name, full, h); err != nil {
			return 0, err
		}
	}
	fence, err := l.d.upsertRecord(ctx, tx, sqlRecord{Name: full, H: h, Conn: conn})
	if err != nil || !req.CheckSlot {
		return fence, err
	}
	return fence, l.insertSlot(ctx, tx, full, h, fence)
}

// checkSlot refuses a slot at or before the job's cursor with a
// *SlotDoneError naming the claim that moved it there.
func (l *sqlLocker) checkSlot(ctx context.Context, tx *sql.Tx, name, full string, h lock.Record) error {
	if err := l.d.lockLedger(ctx, tx, full); err != nil {
		return err
	}
	r, ok, err := l.newestRow(ctx, tx, full, h.Job)
	if err != nil {
		return err
	}
	if ok && r.cursor() >= h.Slot.UnixNano() {
		return &lock.SlotDoneError{Lock: name, Record: r.record(h.Job), Outcome: r.outcome}
	}
	return nil
}

// insertSlot claims h's slot with its lease's fencing token (the unique
// key refuses a second claim of it whatever else went wrong), and drops
// the job's claims older than the retention.
func (l *sqlLocker) insertSlot(ctx context.Context, tx *sql.Tx, full string, h lock.Record, fence int64) error {
	ns := h.Slot.UnixNano()
	_, err := tx.ExecContext(ctx, l.d.rebind(`INSERT INTO cronvisor_slots
		(name, job, slot_ns, run_id, host, since, fencing_token, outcome, through_ns)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)`), full, h.Job, ns, h.RunID, h.Host, fmtTime(h.Since), fence, string(run.Running))
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, l.d.rebind(`DELETE FROM cronvisor_slots WHERE name = ? AND job = ? AND slot_ns < ?`),
		full, h.Job, ns-l.retention.Nanoseconds())
	return err
}

// LastSlots implements SlotLedger: one query over this prefix's claims.
func (l *sqlLocker) LastSlots(ctx context.Context, keys []lock.SlotKey) (map[lock.SlotKey]time.Time, error) {
	out := map[lock.SlotKey]time.Time{}
	if len(keys) == 0 {
		return out, nil
	}
	if err := l.ensureSchema(ctx); err != nil {
		return nil, err
	}
	want := make(map[lock.SlotKey]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	opCtx, cancel := l.opCtx(ctx)
	defer cancel()
	rows, err := l.db.QueryContext(opCtx, l.d.rebind(`SELECT name, job, MAX(slot_ns), MAX(through_ns)
		FROM cronvisor_slots WHERE name LIKE ? GROUP BY name, job`), likePrefix(l.prefix))
	if err != nil {
		return nil, l.wrap(ctx, "read the slot ledger", err)
	}
	defer rows.Close()
	for rows.Next() {
		var full, job string
		var slot, through int64
		if err := rows.Scan(&full, &job, &slot, &through); err != nil {
			return nil, l.wrap(ctx, "read the slot ledger", err)
		}
		// The cursor is the newest of both: rows after a missed claim are
		// past what it covers.
		if k := (lock.SlotKey{Lock: strings.TrimPrefix(full, l.prefix), Job: job}); want[k] {
			out[k] = timeFromNS(max(slot, through))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap(ctx, "read the slot ledger", err)
	}
	return out, nil
}

// ClaimMissed implements SlotLedger: in one transaction, ordered after
// every other claim of the lock's slots where the server can (see
// lockLedger), the job's cursor at or past m.First loses to the claim
// that moved it; else the row of m.First is inserted with outcome
// "missed", standing for the slots through m.Through.
func (l *sqlLocker) ClaimMissed(ctx context.Context, m lock.MissedClaim) (bool, lock.Record, error) {
	if err := checkName(m.Lock); err != nil {
		return false, lock.Record{}, err
	}
	if err := checkName(m.Job); err != nil {
		return false, lock.Record{}, fmt.Errorf("lock %q: job: %w", m.Lock, err)
	}
	if m.First.UnixNano() <= 0 || m.Through.Before(m.First) {
		return false, lock.Record{}, fmt.Errorf("lock %q: missed claim of job %s: slots %s through %s",
			m.Lock, m.Job, m.First, m.Through)
	}
	if m.Host == "" {
		m.Host = l.host
	}
	if err := l.ensureSchema(ctx); err != nil {
		return false, lock.Record{}, err
	}
	opCtx, cancel := l.opCtx(ctx)
	defer cancel()
	won, by, err := l.claimMissed(opCtx, l.prefix+m.Lock, m)
	if err != nil {
		return false, lock.Record{}, l.wrap(ctx, fmt.Sprintf("lock %q: claim missed slots of job %s", m.Lock, m.Job), err)
	}
	return won, by, nil
}

func (l *sqlLocker) claimMissed(ctx context.Context, full string, m lock.MissedClaim) (bool, lock.Record, error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return false, lock.Record{}, err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	if err := l.d.lockLedger(ctx, tx, full); err != nil {
		return false, lock.Record{}, err
	}
	r, ok, err := l.newestRow(ctx, tx, full, m.Job)
	if err != nil {
		return false, lock.Record{}, err
	}
	if ok && r.cursor() >= m.First.UnixNano() {
		return false, r.record(m.Job), nil
	}
	fence, err := l.d.missedFence(ctx, tx)
	if err != nil {
		return false, lock.Record{}, err
	}
	_, err = tx.ExecContext(ctx, l.d.rebind(`INSERT INTO cronvisor_slots
		(name, job, slot_ns, run_id, host, since, fencing_token, outcome, through_ns)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`), full, m.Job, m.First.UnixNano(), m.RunID, m.Host,
		fmtTime(time.Now()), fence, outcomeMissed, m.Through.UnixNano())
	if err == nil {
		err = tx.Commit()
	}
	if err != nil && l.d.duplicate(err) { // a claim of the same slot that the ledger's order did not hold back
		_ = tx.Rollback()
		r, _, rerr := l.newestRow(ctx, l.db, full, m.Job)
		return false, r.record(m.Job), rerr
	}
	return err == nil, lock.Record{}, err
}

// SetOutcome implements OutcomeSetter: the row of the slot this lease
// claimed (found by its fencing token) gets the run's outcome and the
// run id that ended it. On the lock's connection while it holds; once
// lost, or when that connection fails, on another: the outcome is a fact
// about this run whoever holds the lock now. When that fails too (the
// server is away), the write is retried in the background for up to
// outcomeRetryFor, and the error says so.
func (le *sqlLease) SetOutcome(outcome run.Outcome, runID string) error {
	h := le.Record()
	if !le.claimed || h.Job == "" {
		return nil
	}
	l := le.locker
	o := slotOutcome{name: le.Name(), full: le.full, job: h.Job, slot: h.Slot.UnixNano(), fence: le.fence,
		outcome: string(outcome), runID: runID}
	select {
	case <-le.Lost():
	default:
		if le.onConn(func(c *sql.Conn) error { return l.writeOutcome(context.Background(), c, o) }) == nil {
			return nil
		}
	}
	err := l.writeOutcome(context.Background(), l.db, o)
	if err == nil {
		return nil
	}
	o.until = time.Now().Add(outcomeRetryFor)
	if l.outcomes.add(l, o) {
		return fmt.Errorf("%w (retrying in the background for up to %s)", err, outcomeRetryFor)
	}
	return err
}

// addLedgerColumns adds the ledger's columns to a cronvisor_slots made
// before them, looking first: an ALTER TABLE, even one with nothing to
// do, waits for every transaction on the table. A column another
// supervisor added meanwhile is found on a second look.
func (l *sqlLocker) addLedgerColumns(ctx context.Context) error {
	have, err := l.slotColumns(ctx)
	if err != nil {
		return err
	}
	for _, c := range l.d.ledgerColumns() {
		if have[c[0]] {
			continue
		}
		if _, err := l.db.ExecContext(ctx, `ALTER TABLE cronvisor_slots ADD COLUMN `+c[0]+` `+c[1]); err != nil {
			if have, _ = l.slotColumns(ctx); !have[c[0]] {
				return err
			}
		}
	}
	return nil
}

// slotColumns are the columns cronvisor_slots has.
func (l *sqlLocker) slotColumns(ctx context.Context) (map[string]bool, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_name = 'cronvisor_slots' AND table_schema = `+l.d.currentSchema())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		have[strings.ToLower(c)] = true
	}
	return have, rows.Err()
}
