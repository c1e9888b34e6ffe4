package config

import (
	"fmt"
	"slices"
)

// Key is one key of jobs.yaml as `cronvisor help jobs.yaml` shows it: its
// default as a user would write it, and one line on what it does.
type Key struct {
	Name, Default, Doc string
}

// Section is one mapping of jobs.yaml and the keys it accepts.
type Section struct {
	Path, Doc string
	Keys      []Key
}

// The tables below, with topTable (topkeys.go) and jobTable (jobkeys.go),
// are the decoder's known keys (topKeys, jobKeys, defaultKeys, backendKeys,
// historyKeys are made from them) and the help text: a key the decoder
// accepts is documented, or the build's test fails.
var (
	backendRef = []Key{
		{"type", BackendFile, "file | redis | mysql | postgres"},
		{"url", "", "redis://HOST:PORT/DB, rediss://, or postgres://USER:PASS@HOST:PORT/DB; ${VAR} is expanded from the environment"},
		{"dsn", "", "mysql: USER:PASS@tcp(HOST:PORT)/DB; ${VAR} is expanded from the environment"},
		{"ttl", DefaultLockTTL.String(), "lease of a Redis lock, renewed while the run lives"},
		{"prefix", "cronvisor:", "redis, mysql, postgres: starts every key, lock name and row, so installations can share a server"},
	}
	targetRef = []Key{
		{"on", "(required)", "events: failure, timeout, skip, missed, recovered, success, start, slow, host_lost, fast"},
		{"url", "", "webhook: POST the JSON body here (one of url or command)"},
		{"headers", "{}", "webhook headers; ${VAR} is expanded from the environment"},
		{"command", "", "run with the body's fields in CRONVISOR_* variables and the output tail on stdin"},
		{"after_skips", "1", "skip: only once this many consecutive skips are reached"},
	}
	metricsRef = []Key{
		{"listen", "(required)", "HOST:PORT of /metrics and /healthz"},
	}
	consoleRef = []Key{
		{"read_only", "false", "no console key or : command that changes anything (run, pause, resume, kill, reload)"},
	}
	historyBackendRef = []Key{
		{"type", HistoryLocal, "sqlite | postgres: this host's store alone, or also shipped to one history every host shares"},
		{"url", "", "postgres://USER:PASS@HOST:PORT/DB (postgres only); ${VAR} is expanded from the environment"},
	}
	historyRef = []Key{
		{"keep_runs", fmt.Sprint(DefaultKeepRuns), "records kept per job"},
		{"keep_age", "720h", "records older than this are pruned"},
		{"log_limit", "1MiB", "output kept per run: head and tail, the cut is marked"},
	}
)

var (
	topRef      = topKeysOf(topTable)
	topKeys     = keyNames(topRef)
	backendKeys = keyNames(backendRef)
	historyKeys = keyNames(historyRef)
	targetKeys  = keyNames(targetRef)
	metricsKeys = keyNames(metricsRef)
	consoleKeys = keyNames(consoleRef)
)

// historyBackendKeys are history_backend's keys.
var historyBackendKeys = keyNames(historyBackendRef)

func topKeysOf(table []topKey) []Key {
	keys := make([]Key, len(table))
	for i, k := range table {
		keys[i] = k.Key
	}
	return keys
}

func keyNames(keys []Key) []string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	return names
}

// Reference lists every mapping of jobs.yaml with the keys the decoder
// accepts in it, in the order a file usually has them.
func Reference() []Section {
	var defs []Key
	for _, k := range jobRef {
		if slices.Contains(defaultKeys, k.Name) {
			defs = append(defs, k)
		}
	}
	return []Section{
		{"", "the file's own keys", slices.Clone(topRef)},
		{"defaults", "job keys applied where a job does not set them", defs},
		{"jobs[]", "each job", slices.Clone(jobRef)},
		{"lock_backend", "the lock backend", slices.Clone(backendRef)},
		{"history_backend", "the shared history", slices.Clone(historyBackendRef)},
		{"history", "retention", slices.Clone(historyRef)},
		{"metrics", "Prometheus metrics", slices.Clone(metricsRef)},
		{"console", "the console", slices.Clone(consoleRef)},
		{"notify[]", "each notification target (a job's or defaults')", slices.Clone(targetRef)},
	}
}
