package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"cronvisor/internal/base/run"
)

// columns are the runs columns a Record maps to, in the order of row.args
// and scanRecord.
const columns = `run_id, job, outcome, at, scheduled_at, started_at, ended_at,
	exit_code, reason, holder_pid, holder_host, holder_job, holder_run_id,
	holder_since, log_path, host, supervisor_pid, pid, manual, attempt,
	cpu_user_us, cpu_system_us, memory_peak_bytes, oom_killed, progress,
	resources, resource_wait_ms`

// values are the placeholders of columns, one each.
const values = `VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

const insertSQL = `INSERT INTO runs (` + columns + `) ` + values

const selectRunSQL = `SELECT id, ` + columns + ` FROM runs WHERE run_id = ?`

const updateSQL = `UPDATE runs SET run_id=?, job=?, outcome=?, at=?, scheduled_at=?,
	started_at=?, ended_at=?, exit_code=?, reason=?, holder_pid=?, holder_host=?,
	holder_job=?, holder_run_id=?, holder_since=?, log_path=?, host=?,
	supervisor_pid=?, pid=?, manual=?, attempt=?, cpu_user_us=?, cpu_system_us=?,
	memory_peak_bytes=?, oom_killed=?, progress=?, resources=?, resource_wait_ms=?
	WHERE id=?`

// endUpdateSQL is updateSQL for an end that changes only what a run's end
// sets: it leaves the run_id, job-and-at and at indexes alone, which the
// full statement, naming their columns, would delete from and insert into
// again with the same values.
const endUpdateSQL = `UPDATE runs SET outcome=?, ended_at=?, exit_code=?, reason=?, pid=?, cpu_user_us=?, cpu_system_us=?, memory_peak_bytes=?, oom_killed=?, progress=? WHERE id=?`

// endColumns are the positions, in args' order, of endUpdateSQL's columns.
var endColumns = [...]int{2, 6, 7, 8, 17, 20, 21, 22, 23, 24}

// WriteKind says what a Write does.
type WriteKind int

// Kinds of Write, one per method of the same name.
const (
	WriteStart WriteKind = iota
	WriteFinish
	WriteSkip
)

// Write is one Start, Finish or Skip, for Apply.
type Write struct {
	Kind   WriteKind
	Record run.Record
	// noStart: a Finish whose Start was folded into it (the Writer's
	// fold): its row is most likely missing, so it is inserted first and
	// looked up only if an earlier attempt did insert it.
	noStart bool
}

// Apply makes the writes in one transaction: one commit (and, with
// synchronous=FULL, one fsync) for all of them, which is what lets the
// Writer record a burst of concurrent runs without paying a commit per
// run. errs[i] is the i-th write's error: a write that is wrong in itself
// (ErrBadRecord, ErrDuplicate) is left out and the others are committed;
// any other failure (the disk is full, the file cannot be opened) fails
// the whole batch with that error, and the batch can be applied again
// later: a Finish inserts its row when the Start is missing, and a retried
// Start or Skip that did commit is ErrDuplicate.
//
// A batch committed into a file that was replaced meanwhile is applied
// again to the file now at the path (see Store); one deleted is copied
// there with the batch.
func (s *Store) Apply(ctx context.Context, writes []Write) []error {
	h, done, err := s.writer()
	if err != nil {
		return failAll(len(writes), err)
	}
	errs := s.applyTo(ctx, h, writes)
	done()
	if !s.moved(h) {
		return errs
	}
	// Replaced, not deleted (a deleted file is copied back whole): the
	// batch goes into the file now at the path too.
	if h, done, err = s.writer(); err != nil {
		return failAll(len(writes), err)
	}
	again := s.applyTo(ctx, h, writes)
	done()
	for i, err := range again {
		if errors.Is(err, ErrDuplicate) && errs[i] == nil {
			again[i] = nil // it made it into the new file too
		}
	}
	return again
}

func failAll(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// permanent tells whether a write's error is about the write itself, so
// that applying it again cannot succeed.
func permanent(err error) bool {
	return errors.Is(err, ErrBadRecord) || errors.Is(err, ErrDuplicate)
}

// applyTo makes the writes on h in one transaction; a lone write of one
// statement is made by itself.
func (s *Store) applyTo(ctx context.Context, h *handle, writes []Write) []error {
	if len(writes) == 1 {
		// A quiet daemon's batch: one run's record, one INSERT. SQLite
		// commits a statement outside a transaction by itself, with the
		// same durability; the BEGIN and COMMIT statements, prepared and
		// stepped for each batch, are spared.
		if err := s.apply(ctx, nil, h, h.insert, writes[0]); !errors.Is(err, errNeedsTx) {
			return []error{err}
		}
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return failAll(len(writes), fmt.Errorf("history: %w", err))
	}
	defer tx.Rollback()
	insert := tx.StmtContext(ctx, h.insert)
	errs := make([]error, len(writes))
	for i, w := range writes {
		// A failed statement rolls back only itself in SQLite; the
		// transaction goes on with the others, unless the failure is
		// the store's (SQLite may have rolled back the transaction).
		if errs[i] = s.apply(ctx, tx, h, insert, w); errs[i] != nil && !permanent(errs[i]) {
			return failAll(len(writes), errs[i])
		}
	}
	if err := tx.Commit(); err != nil {
		return failAll(len(writes), fmt.Errorf("history: commit: %w", err))
	}
	return errs
}

// apply makes one write within tx; insert is the insert statement of tx.
// With tx nil a write of one statement is made alone (insert is then
// the handle's own), and one that needs more is errNeedsTx.
func (s *Store) apply(ctx context.Context, tx *sql.Tx, h *handle, insert *sql.Stmt, w Write) error {
	r := w.Record
	// insertRow records r as a new row; verb names the write in errors.
	insertRow := func(verb string) error {
		if err := check(r); err != nil {
			return err
		}
		if _, err := insert.ExecContext(ctx, args(r)...); err != nil {
			if duplicate(err) {
				return fmt.Errorf("%w: %s %s/%s: %w", ErrDuplicate, verb, r.Job, r.RunID, err)
			}
			return fmt.Errorf("history: %s %s/%s: %w", verb, r.Job, r.RunID, err)
		}
		return nil
	}
	switch w.Kind {
	case WriteStart:
		r.Outcome = run.Running
		return insertRow("start")
	case WriteFinish:
		if !r.Outcome.Final() {
			return fmt.Errorf("%w: finish %s/%s with outcome %q", ErrBadRecord, r.Job, r.RunID, r.Outcome)
		}
		err := errRowThere
		if w.noStart {
			err = insertWhole(ctx, insert, r)
		}
		switch {
		case errors.Is(err, errRowThere) && tx == nil:
			return errNeedsTx
		case errors.Is(err, errRowThere):
			err = finish(ctx, tx, h, insert, r)
		}
		switch {
		case errors.Is(err, ErrBadRecord):
			return err
		case err != nil:
			return fmt.Errorf("history: finish %s/%s: %w", r.Job, r.RunID, err)
		}
	case WriteSkip:
		if r.Outcome == "" {
			r.Outcome = run.Skipped
		}
		if !r.Outcome.Final() {
			return fmt.Errorf("%w: skip %s/%s with outcome %q", ErrBadRecord, r.Job, r.RunID, r.Outcome)
		}
		return insertRow("skip")
	default:
		return fmt.Errorf("%w: unknown write kind %d", ErrBadRecord, w.Kind)
	}
	return nil
}

// Start records an open run (outcome "running"), whatever r.Outcome says.
// It fails if the run id is already recorded.
func (s *Store) Start(ctx context.Context, r run.Record) error {
	return s.Apply(ctx, []Write{{Kind: WriteStart, Record: r}})[0]
}

// Finish closes the row of r.RunID with r's final outcome, or inserts it if
// Start was never recorded (the store was failing then). Zero fields of r
// keep what Start stored, so the caller need not repeat them. The row is
// committed when Finish returns.
func (s *Store) Finish(ctx context.Context, r run.Record) error {
	return s.Apply(ctx, []Write{{Kind: WriteFinish, Record: r}})[0]
}

// Skip records a fire that did not run as a finished row: outcome "skipped"
// when r.Outcome is empty, or another final outcome such as "error" for a
// run that failed to start.
func (s *Store) Skip(ctx context.Context, r run.Record) error {
	return s.Apply(ctx, []Write{{Kind: WriteSkip, Record: r}})[0]
}

// finish updates the run's row within tx, or inserts it.
func finish(ctx context.Context, tx *sql.Tx, h *handle, insert *sql.Stmt, r run.Record) error {
	var id int64
	old, err := scanRecord(tx.StmtContext(ctx, h.selectRun).QueryRowContext(ctx, r.RunID), &id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if err := check(r); err != nil {
			return err
		}
		_, err = insert.ExecContext(ctx, args(r)...)
		return err
	case err != nil:
		return err
	}
	r = merge(old, r)
	if err := check(r); err != nil {
		return err
	}
	now := args(r)
	if onlyEndChanged(now, args(old)) {
		end := make([]any, 0, len(endColumns)+1)
		for _, c := range endColumns {
			end = append(end, now[c])
		}
		_, err = tx.StmtContext(ctx, h.endUpdate).ExecContext(ctx, append(end, id)...)
		return err
	}
	_, err = tx.StmtContext(ctx, h.update).ExecContext(ctx, append(now, id)...)
	return err
}

// errNeedsTx: apply, given no transaction, was asked for a write of more
// than one statement (a finish that reads and updates its row).
var errNeedsTx = errors.New("history: the write needs a transaction")

// errRowThere: insertWhole found the run's row written already (an
// earlier attempt of its batch); finish merges into it.
var errRowThere = errors.New("history: row already there")

// insertWhole inserts the finished record r as its row, skipping finish's
// look-up of the start's row; a row already there (an earlier attempt of
// the batch committed it) is errRowThere.
func insertWhole(ctx context.Context, insert *sql.Stmt, r run.Record) error {
	if err := check(r); err != nil {
		return err
	}
	_, err := insert.ExecContext(ctx, args(r)...)
	if duplicate(err) {
		return errRowThere
	}
	return err
}

// onlyEndChanged tells whether the stored row was and the merged row now
// (args of each) differ in endColumns alone.
func onlyEndChanged(now, was []any) bool {
	for i := range now {
		if now[i] != was[i] && !slices.Contains(endColumns[:], i) {
			return false
		}
	}
	return true
}

// merge fills the zero fields of r from the stored row old.
func merge(old, r run.Record) run.Record {
	pick := func(n, o time.Time) time.Time {
		if n.IsZero() {
			return o
		}
		return n
	}
	r.ScheduledAt = pick(r.ScheduledAt, old.ScheduledAt)
	r.StartedAt = pick(r.StartedAt, old.StartedAt)
	r.EndedAt = pick(r.EndedAt, old.EndedAt)
	if r.Job == "" {
		r.Job = old.Job
	}
	if r.ExitCode == nil {
		r.ExitCode = old.ExitCode
	}
	if r.Reason == "" {
		r.Reason = old.Reason
	}
	if r.Holder == nil {
		r.Holder = old.Holder
	}
	if r.LogPath == "" {
		r.LogPath = old.LogPath
	}
	if r.Host == "" {
		r.Host = old.Host
	}
	if r.SupervisorPID == 0 {
		r.SupervisorPID = old.SupervisorPID
	}
	if r.PID == 0 {
		r.PID = old.PID
	}
	r.Manual = r.Manual || old.Manual
	if r.Attempt == 0 {
		r.Attempt = old.Attempt
	}
	if r.Usage == (run.Usage{}) {
		r.Usage = old.Usage
	}
	if r.Progress == "" {
		r.Progress = old.Progress
	}
	if r.Resources == nil { // an end does not repeat its start's slots
		r.Resources = old.Resources
	}
	if r.ResourceWait == 0 {
		r.ResourceWait = old.ResourceWait
	}
	return r
}

// check refuses records that could not be found or ordered again.
func check(r run.Record) error {
	switch {
	case r.Job == "":
		return fmt.Errorf("%w: no job (run %q)", ErrBadRecord, r.RunID)
	case r.RunID == "":
		return fmt.Errorf("%w: no run id (job %q)", ErrBadRecord, r.Job)
	case sortTime(r).IsZero():
		return fmt.Errorf("%w: %s/%s has no time", ErrBadRecord, r.Job, r.RunID)
	}
	return nil
}

// sortTime is the "at" column: the slot, else the start, else the end.
func sortTime(r run.Record) time.Time {
	for _, t := range []time.Time{r.ScheduledAt, r.StartedAt, r.EndedAt} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// args are r's values for columns, in order.
func args(r run.Record) []any {
	var hPID, hHost, hJob, hRun, hSince any
	if h := r.Holder; h != nil {
		hPID, hHost, hJob, hRun, hSince = h.PID, h.Host, h.Job, h.RunID, Nanos(h.Since)
	}
	var exit any
	if r.ExitCode != nil {
		exit = *r.ExitCode
	}
	return append([]any{r.RunID, r.Job, string(r.Outcome), sortTime(r).UnixNano(),
		Nanos(r.ScheduledAt), Nanos(r.StartedAt), Nanos(r.EndedAt), exit, r.Reason,
		hPID, hHost, hJob, hRun, hSince, r.LogPath, r.Host, r.SupervisorPID, r.PID, r.Manual, r.Attempt},
		append(append(UsageArgs(r.Usage), r.Progress), ResourceArgs(r)...)...)
}
