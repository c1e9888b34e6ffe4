package config

import (
	"fmt"
	"slices"

	"cronvisor/run"
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

// The tables below are the decoder's known keys (topKeys, jobKeys,
// defaultKeys, backendKeys, historyKeys are made from them) and the help
// text: a key the decoder accepts is documented, or the build's test fails.
var (
	topRef = []Key{
		{"state_dir", DefaultStateDir, "holds locks/, logs/, the history database and the socket; relative to this file"},
		{"shutdown_grace", DefaultShutdownGrace.String(), "on SIGTERM, how long running jobs may finish before they are ended like a timeout"},
		{"defaults", "{}", "any job key but name and lock, applied where a job does not set it"},
		{"lock_backend", "{type: file}", "where locks live: file (flock on STATE_DIR/locks/LOCK.lock), redis, mysql or postgres"},
		{"history_backend", "{type: sqlite}", "where the history lives: sqlite (this host's store alone) or postgres (one history for every host sharing it)"},
		{"history", "", "retention of run records and their output"},
		{"metrics", "", "{listen: HOST:PORT}: Prometheus /metrics and /healthz (off when absent; daemon --metrics-addr wins)"},
		{"console", "", "{read_only: true}: every console opens read-only, as with --read-only"},
		{"durability", string(run.DurabilityMachine), "machine: every record survives a machine crash or power cut (fdatasync); process: any crash of cronvisor or its jobs, not of the machine (no fdatasync)"},
		{"jobs", "[]", "the list of jobs"},
	}
	jobRef = [numJobKeys]Key{
		kName:            {"name", "(required)", "unique, [A-Za-z0-9_.-]+; names the job's lock and logs"},
		kSchedule:        {"schedule", "(required)", "5 fields, 6 with leading seconds, @yearly..@hourly, or @every DURATION; H and ~ draw from the job's name"},
		kTimezone:        {"timezone", "local zone", "IANA zone the schedule is read in (Europe/Berlin, UTC)"},
		kCommand:         {"command", "(required)", "a string runs with `shell -c`; a list is exec'd as argv"},
		kShell:           {"shell", DefaultShell, "absolute path of the shell a string command runs with"},
		kDir:             {"dir", "this file's dir", "working directory of the run; relative to this file"},
		kEnv:             {"env", "{}", "variables on top of the supervisor's environment (extends defaults' env)"},
		kTimeout:         {"timeout", "(required)", "max runtime, or none; then SIGTERM to the run's process group, SIGKILL after kill_grace"},
		kKillGrace:       {"kill_grace", DefaultKillGrace.String(), "time between SIGTERM and SIGKILL when a run is ended"},
		kOverlap:         {"overlap", string(OverlapSkip), "skip | queue | replace | allow: what a fire does while the lock is held"},
		kLock:            {"lock", "the job's name", "lock name; jobs sharing a lock never run at the same time"},
		kJitter:          {"jitter", "0s", "a delay drawn from the job's name and slot, up to this much"},
		kCatchUp:         {"catch_up", "0s", "after downtime, run once if a fire was missed less than this long ago"},
		kEnabled:         {"enabled", "true", "false keeps the job in the file without scheduling it"},
		kOnLockLost:      {"on_lock_lost", string(LockLostEnd), "end | continue: a run whose Redis or SQL lock is lost is ended, or goes on unguarded"},
		kLogOutput:       {"log_output", "true", "also copy output lines into the daemon's log (rate-capped)"},
		kUser:            {"user", "the supervisor's", "run as this user (name or uid) with its groups, HOME, USER, LOGNAME, SHELL; root supervisor only"},
		kGroup:           {"group", "the user's primary", "run with this group (name or gid)"},
		kRetries:         {"retries", "0", "extra attempts in the same slot, under the same lock, after an outcome in retry_on"},
		kRetryBackoff:    {"retry_backoff", DefaultRetryBackoff.String(), "wait before the first retry, doubling per attempt"},
		kRetryBackoffMax: {"retry_backoff_max", DefaultRetryBackoffMax.String(), "longest wait between attempts"},
		kRetryOn:         {"retry_on", "[failed, timeout]", "the outcomes retried"},
		kWarnAfter:       {"warn_after", "0s", "a slow notification and a console mark once a run passes this (0: off)"},
		kPing:            {"ping", "", "monitor URL, healthchecks.io scheme: /start, success, /fail or /EXIT, ?rid=RUN_ID"},
		kPingSkips:       {"ping_skips", "false", "also ping /fail with the reason for skips and misses"},
		kNotify:          {"notify", "[]", "notification targets: each {on: [events], url: or command:, headers:, after_skips:}"},
		kNice:            {"nice", "the supervisor's", "-20..19: the run's scheduling priority (below the supervisor's own: root only)"},
		kIONice:          {"ionice", "the supervisor's", "idle, best-effort[:N] or realtime:N (N 0..7, best-effort alone is 4; realtime: root only)"},
		kOOMScoreAdj:     {"oom_score_adj", "the supervisor's", "-1000..1000: how readily the OOM killer picks the run (below the supervisor's own: root only)"},
		kNoFile:          {"nofile", "the supervisor's", "RLIMIT_NOFILE, soft and hard: open files, a count or unlimited"},
		kNProc:           {"nproc", "the supervisor's", "RLIMIT_NPROC, soft and hard: processes of the run's user, a count or unlimited"},
		kCore:            {"core", "the supervisor's", "RLIMIT_CORE, soft and hard: core dump size, a size (0: none) or unlimited"},
		kMemoryMax:       {"memory_max", "none", "the run's cgroup memory.max: a size in bytes or K, M, G, T (base 1024)"},
		kMemoryHigh:      {"memory_high", "none", "the run's cgroup memory.high: reclaim and throttle above this size"},
		kCPUMax:          {"cpu_max", "none", "the run's cgroup cpu.max: cores (0.5, 2) or a percentage of one core (50%)"},
		kTasksMax:        {"tasks_max", "none", "the run's cgroup pids.max: processes and threads"},
		kIOWeight:        {"io_weight", "none", "the run's cgroup io.weight: 1..10000 (100 is the kernel's default)"},
	}
	backendRef = []Key{
		{"type", BackendFile, "file | redis | mysql | postgres"},
		{"url", "", "redis://HOST:PORT/DB, rediss://, or postgres://USER:PASS@HOST:PORT/DB; ${VAR} is expanded from the environment"},
		{"dsn", "", "mysql: USER:PASS@tcp(HOST:PORT)/DB; ${VAR} is expanded from the environment"},
		{"ttl", DefaultLockTTL.String(), "lease of a Redis lock, renewed while the run lives"},
		{"prefix", "cronvisor:", "redis, mysql, postgres: starts every key, lock name and row, so installations can share a server"},
	}
	targetRef = []Key{
		{"on", "(required)", "events: failure, timeout, skip, missed, recovered, success, start, slow, host_lost"},
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
	topKeys     = keyNames(topRef)
	jobKeys     = keyNames(jobRef[:])
	backendKeys = keyNames(backendRef)
	historyKeys = keyNames(historyRef)
	targetKeys  = keyNames(targetRef)
	metricsKeys = keyNames(metricsRef)
	consoleKeys = keyNames(consoleRef)
)

// historyBackendKeys are history_backend's keys.
var historyBackendKeys = keyNames(historyBackendRef)

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
		{"jobs[]", "each job", slices.Clone(jobRef[:])},
		{"lock_backend", "the lock backend", slices.Clone(backendRef)},
		{"history_backend", "the shared history", slices.Clone(historyBackendRef)},
		{"history", "retention", slices.Clone(historyRef)},
		{"metrics", "Prometheus metrics", slices.Clone(metricsRef)},
		{"console", "the console", slices.Clone(consoleRef)},
		{"notify[]", "each notification target (a job's or defaults')", slices.Clone(targetRef)},
	}
}
