package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"cronvisor/internal/config"
	"cronvisor/internal/daemon"
	"cronvisor/internal/lock"
)

// readConfig loads jobs.yaml for a command that only looks (status,
// locks, history, logs, next, an attached console), from any shell and
// whatever the file holds: secrets it does not need are not resolved, and
// a refused file still names its state dir and what jobs it could read.
// A refused file is said in one line on stderr, its first problem with
// its position; the command then shows the daemon's view, or without a
// daemon the state dir's. Only a file that cannot be read is an error.
func readConfig(g *globals) (cfg *config.Config, refused bool, err error) {
	cfg, problems := config.LoadForReading(g.configPath)
	return reportRead(g, cfg, problems)
}

// reportRead is readConfig's verdict on what a load gave: a file that
// cannot be read is an error, a refused one a line on stderr.
func reportRead(g *globals, cfg *config.Config, problems []config.Problem) (*config.Config, bool, error) {
	if cfg == nil {
		config.Report(g.stderr, problems)
		return nil, false, exitCode(1, fmt.Errorf("%s cannot be read", g.configPath))
	}
	errs := config.Errors(problems)
	if len(errs) == 0 {
		return cfg, false, nil
	}
	sayRefused(g, errs[0].String(), len(errs))
	return cfg, true, nil
}

// sayRefused is the one line on stderr naming a refused file's first
// problem, of n.
func sayRefused(g *globals, first string, n int) {
	more := ""
	if n > 1 {
		more = fmt.Sprintf(", %d problems in all", n)
	}
	fmt.Fprintf(g.stderr, "cronvisor: %s (the file is refused%s: cronvisor validate; shown is the running daemon's view, else the state dir's)\n",
		first, more)
}

// errBackendNotAsked stands for the lock backend of a shell that lacks the
// variables its address needs.
var errBackendNotAsked = errors.New("lock backend not asked")

// backendNotAsked is the one line saying why the lock backend was not
// asked, "" when it can be.
func backendNotAsked(cfg *config.Config) string {
	if len(cfg.UnsetEnv) == 0 {
		return ""
	}
	key := cfg.LockBackend.AddressKey()
	verb := "is"
	if len(cfg.UnsetEnv) > 1 {
		verb = "are"
	}
	return fmt.Sprintf("cronvisor: the %s lock backend was not asked: lock_backend.%s needs %s, which %s not set in this shell (lock holders are not shown)",
		cfg.LockBackend.Type, key, strings.Join(cfg.UnsetEnv, ", "), verb)
}

// readLocker is the lock backend a looking command reads: the daemon's,
// or one that answers errBackendNotAsked when this shell cannot reach it.
func readLocker(cfg *config.Config) (lock.Locker, error) {
	if len(cfg.UnsetEnv) > 0 {
		return unaskedLocker{}, nil
	}
	return daemon.NewLocker(cfg)
}

// unaskedLocker is a lock backend that is not asked (see readLocker).
type unaskedLocker struct{}

func (unaskedLocker) Acquire(context.Context, lock.Request) (lock.Grant, error) {
	return lock.Grant{}, errBackendNotAsked
}

func (unaskedLocker) Inspect(_ context.Context, name string) (lock.Status, error) {
	return lock.Status{Name: name}, errBackendNotAsked
}

func (unaskedLocker) List(context.Context) ([]lock.Status, error) { return nil, errBackendNotAsked }
