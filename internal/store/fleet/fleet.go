// Package fleet is the history that every host of a fleet shares on one
// PostgreSQL server (history_backend: {type: postgres, url: ...}): the
// runs and skips of every host in one table, and a row per host saying
// it is alive. The local SQLite store stays each host's durable record;
// what it writes is shipped here, idempotent by run id, so a server
// outage delays the shared view and loses nothing.
//
// Dependencies are given at construction: Open takes the server's URL and
// this host's name.
package fleet

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"cronvisor/internal/base/mask"
)

// Store is the fleet's shared history on one PostgreSQL database. It is
// safe for concurrent use. It does not connect until asked: an
// unreachable server fails each call until it is back.
type Store struct {
	db   *sql.DB
	host string

	schemaMu sync.Mutex
	schemaOK bool
}

// Open returns a store on the server of rawURL for host (the name this
// host's records carry). An unset connect_timeout defaults to 2 s, so
// that an unreachable server fails a call quickly; its TCP connections
// carry keepalives and a user timeout (see dialer).
func Open(rawURL, host string) (*Store, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("history backend: invalid postgres url: %v", mask.Error(err, rawURL))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 2 * time.Second
	}
	cfg.DialFunc = dialer().DialContext
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(maxIdleConns)
	db.SetConnMaxIdleTime(time.Minute)
	return &Store{db: db, host: host}, nil
}

// Host is the name this store's records are written under.
func (s *Store) Host() string { return s.host }

// Close closes the store's connections.
func (s *Store) Close() error { return s.db.Close() }

// EnsureSchema creates the fleet's tables once per store; a failure is
// tried again at the next call. Hosts starting together serialise on a
// transaction-level advisory lock, since PostgreSQL's CREATE TABLE IF NOT
// EXISTS is not safe against a concurrent one.
func (s *Store) EnsureSchema(ctx context.Context) error {
	s.schemaMu.Lock()
	defer s.schemaMu.Unlock()
	if s.schemaOK {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history backend: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLockKey); err != nil {
		return fmt.Errorf("history backend: create the fleet tables: %w", err)
	}
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("history backend: create the fleet tables: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history backend: create the fleet tables: %w", err)
	}
	s.schemaOK = true
	return nil
}
