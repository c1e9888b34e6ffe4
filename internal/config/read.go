package config

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
)

// LoadForReading reads the file at path for a command that only looks
// (status, locks, history, logs, next, an attached console); see
// ParseForReading. The Config is nil only when the file cannot be read.
func LoadForReading(path string) (*Config, []Problem) {
	data, problems, ok := read(path)
	if !ok {
		return nil, problems
	}
	return ParseForReading(path, data)
}

// ParseForReading is Parse for a command that only looks, run from any
// shell while the file may be mid-edit. It always returns a Config: with
// errors, what could be read of it (the state dir above all, and the jobs
// as far as they decoded: a job whose schedule was refused has a nil
// Sched), beside the problems, so that the caller can show the daemon's
// or the state dir's view and name the file's problem. Values such a
// command does not need are not resolved: webhook headers keep their
// ${VAR} as written, and a lock_backend url or dsn naming a variable that
// is not set is left empty, the variables listed in UnsetEnv. The file is
// judged as a root supervisor would, and without this process's
// environment size: a reader's account and environment are not the
// daemon's.
func ParseForReading(path string, data []byte) (*Config, []Problem) {
	return parseForReading(path, data, false)
}

// parseForReading is ParseForReading, of the settings alone when
// settingsOnly (see LoadSettingsForReading).
func parseForReading(path string, data []byte, settingsOnly bool) (*Config, []Problem) {
	d, cfg := parse(data, batchBytes, func() *decoder {
		d := newDecoder(path, 0, 0)
		d.reading, d.settingsOnly = true, settingsOnly
		return d
	})
	if cfg == nil {
		cfg = d.bare(data)
	}
	cfg.UnsetEnv = d.unsetEnv
	return cfg, tidy(d.problems)
}

// bare is the Config of a file that is no YAML mapping (a syntax error, a
// list at the top): the defaults, and the state_dir that a top-level
// `state_dir:` line names, so that the daemon serving it can be found.
func (d *decoder) bare(data []byte) *Config {
	cfg := &Config{
		Path: d.path, StateDir: filepath.Join(d.dir, DefaultStateDir), ShutdownGrace: DefaultShutdownGrace,
		LockBackend: LockBackend{Type: BackendFile, TTL: DefaultLockTTL},
		History:     HistoryPolicy{KeepRuns: DefaultKeepRuns, KeepAge: DefaultKeepAge, LogLimit: DefaultLogLimit},
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		v, ok := bytes.CutPrefix(line, []byte("state_dir:"))
		if !ok {
			continue
		}
		s := strings.TrimSpace(string(v))
		if c := strings.Index(s, " #"); c >= 0 {
			s = strings.TrimSpace(s[:c])
		}
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		} else if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
			s = strings.ReplaceAll(s[1:len(s)-1], "''", "'")
		}
		if s != "" {
			cfg.StateDir = d.abs(s)
		}
		break
	}
	return cfg
}
