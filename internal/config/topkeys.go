package config

import "cronvisor/internal/base/run"

// topKey is one key of the file's top level: what help shows (Key) and
// how its value is decoded into the Config.
type topKey struct {
	Key
	// decode sets the key's part of cfg from e, which is the zero entry
	// when the key is not written (see ifWritten). It is nil for defaults
	// and jobs, which config decodes itself: the jobs with what defaults
	// set, after every other key.
	decode func(d *decoder, cfg *Config, e entry)
}

// topTable is every top-level key in the order help shows them, which is
// also the order they are decoded in.
var topTable = []topKey{
	{Key{"state_dir", DefaultStateDir, "holds locks/, logs/, the history database and the socket; relative to this file"},
		(*decoder).stateDirKey},
	{Key{"shutdown_grace", DefaultShutdownGrace.String(), "on SIGTERM, how long running jobs may finish before they are ended like a timeout"},
		ifWritten(func(d *decoder, cfg *Config, e entry) { d.setDuration(&cfg.ShutdownGrace, "shutdown_grace", e.val) })},
	{Key{"defaults", "{}", "any job key but name and lock, applied where a job does not set it"}, nil},
	{Key{"lock_backend", "{type: file}", "where locks live: file (flock on STATE_DIR/locks/LOCK.lock), redis, mysql or postgres"},
		ifWritten(func(d *decoder, cfg *Config, e entry) { cfg.SecretEnv = d.lockBackend(&cfg.LockBackend, e) })},
	{Key{"history_backend", "{type: sqlite}", "where the history lives: sqlite (this host's store alone) or postgres (one history for every host sharing it)"},
		ifWritten((*decoder).historyBackendOf)},
	{Key{"history", "", "retention of run records and their output"},
		ifWritten(func(d *decoder, cfg *Config, e entry) { d.history(&cfg.History, e.val) })},
	{Key{"metrics", "", "{listen: HOST:PORT}: Prometheus /metrics and /healthz (off when absent; daemon --metrics-addr wins)"},
		ifWritten(func(d *decoder, cfg *Config, e entry) { d.metrics(&cfg.Metrics, e.val) })},
	{Key{"console", "", "{read_only: true}: every console opens read-only, as with --read-only"},
		ifWritten(func(d *decoder, cfg *Config, e entry) { d.console(&cfg.Console, e.val) })},
	{Key{"durability", string(run.DurabilityMachine), "machine: every record survives a machine crash or power cut (fdatasync); process: any crash of cronvisor or its jobs, not of the machine (no fdatasync)"},
		ifWritten(func(d *decoder, cfg *Config, e entry) { d.durability(cfg, e.val) })},
	{Key{"calendars", "{}", "named sets of days for the jobs' skip_on and only_on: NAME: [YYYY-MM-DD, ...] or NAME: {dates: [...], file: PATH.ics}"},
		ifWritten(func(d *decoder, cfg *Config, e entry) { d.calendars(cfg, e.val) })},
	{Key{"resources", "{}", "NAME: SLOTS (1..1000): at most SLOTS runs of the jobs that use NAME at once, on every host sharing the lock backend"},
		ifWritten((*decoder).resourcesKey)},
	{Key{"jobs", "[]", "the list of jobs"}, nil},
}

// ifWritten calls decode only for a key written in the file.
func ifWritten(decode func(*decoder, *Config, entry)) func(*decoder, *Config, entry) {
	return func(d *decoder, cfg *Config, e entry) {
		if e.has() {
			decode(d, cfg, e)
		}
	}
}

// stateDirKey decodes state_dir, and checks the directory it names, or
// the default one, for parts that are files.
func (d *decoder) stateDirKey(cfg *Config, e entry) {
	if e.has() {
		if s, ok := d.text("state_dir", e.val); ok {
			cfg.StateDir = d.abs(s)
			cfg.Source.StateDir = pos(e.val)
		}
	}
	d.stateDir(cfg.StateDir, cfg.Source.StateDir)
}
