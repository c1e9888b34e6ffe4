// Package history stores the runs and skips of cronvisor's jobs in a SQLite
// database in the state dir, and writes each run's output to a capped log
// file beside it. It stores and queries; it makes no scheduling decisions.
//
// A Store's optional parts are StoreOptions given to Open or Unopened (the
// tree's convention: required dependencies positional, optional ones
// WithX); none is set on a Store already in use.
package history

import "errors"

// Errors returned (wrapped) by this package.
var (
	// ErrBadRecord: a record lacks its job, run id or any time, or has an
	// outcome that does not fit the call.
	ErrBadRecord = errors.New("history: invalid record")
	// ErrNoHistory: OpenReadOnly found no database; nothing has run yet.
	ErrNoHistory = errors.New("history: no history database")
	// ErrSchema: the database was written by a newer cronvisor, or has not
	// been migrated and cannot be in read-only mode.
	ErrSchema = errors.New("history: unsupported schema version")
	// ErrBadName: a job or run id that cannot be used as a file name.
	ErrBadName = errors.New("history: unusable name for a log file")
	// ErrLogClosed: Write on a Log after Close.
	ErrLogClosed = errors.New("history: log closed")
)
