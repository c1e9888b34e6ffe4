package daemon

import (
	"fmt"

	"cronvisor/config"
	"cronvisor/lock"
)

// newSQLLocker returns the MySQL or PostgreSQL backend.
func newSQLLocker(cfg *config.Config) (lock.Locker, error) {
	var opts []lock.SQLOption
	if p := cfg.LockBackend.Prefix; p != "" {
		opts = append(opts, lock.WithSQLPrefix(p))
	}
	var l lock.Locker
	var err error
	if cfg.LockBackend.Type == "mysql" {
		l, err = lock.NewMySQLLocker(cfg.LockBackend.URL, opts...)
	} else {
		l, err = lock.NewPostgresLocker(cfg.LockBackend.URL, opts...)
	}
	if err != nil {
		return nil, backendErr(cfg, err)
	}
	return l, nil
}

// backendErr places a lock backend's error at its key in the file.
func backendErr(cfg *config.Config, err error) error {
	return fmt.Errorf("%s:%d:%d: lock_backend: %w", cfg.Path, cfg.LockBackend.Line, cfg.LockBackend.Col, err)
}
