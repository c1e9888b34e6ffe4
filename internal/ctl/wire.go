// Package ctl is the daemon's control socket: HTTP and JSON over a unix
// socket at STATE_DIR/cronvisor.sock, a server that exposes a Backend and a
// Client for the CLI and the TUI.
//
// Routes, all JSON; errors are {"error": "...", "code": "..."} with 404 for
// an unknown job, 400 for a bad query, 500 for the rest:
//
//	GET  /v1/jobs                   []JobStatus, written a part at a time as it is built (JobStreamer)
//	GET  /v1/jobs?name=A&name=B     []JobStatus of the named jobs only (unknown names left out)
//	GET  /v1/locks                  []LockStatus
//	GET  /v1/resources              []ResourceStatus
//	GET  /v1/history?job=&outcome=&outcome=&since=RFC3339&limit=
//	                                []run.Record, the contract's form
//	GET  /v1/logs?job=J&run=R       RunLog: the end of the run's saved log; 404 when it has none
//	GET  /v1/daemon                 DaemonStatus
//	POST /v1/jobs/{name}/run        202 RunResult when the run started, 200 when not; ?force=true fires a paused or disabled job
//	POST /v1/jobs/{name}/trigger    as run, under the job's overlap policy
//	POST /v1/jobs/{name}/pause      204
//	POST /v1/jobs/{name}/resume     204
//	POST /v1/jobs/{name}/kill       200 KillResult ({"killed": N, "runs": [...]}) once the runs ended or
//	                                their kill_grace passed; ?wait=false answers once they are signalled
//	POST /v1/reload                 204
//	GET  /v1/events                 newline-delimited WireEvents, one per line
//
// A client that keeps a copy of the jobs (the console) reads the whole
// table once, then follows the event stream and re-reads by name only
// the jobs an event or a passed fire time names, and the rows it shows.
// The stream says every change the daemon makes: besides the runs'
// events, job_paused and job_resumed for a pause from any client, and
// resync when events were dropped for a subscriber that lagged (it then
// reads the whole table again). A daemon older than the name query
// answers it with every job; Client.JobsNamed notices and returns
// ErrUnsupported rather than a silently different answer.
//
// The wire types below are the socket's JSON. Their field names are
// snake_case like the contract's history records; a time that does not
// apply (a job that never ran, a run without deadline) is left out of the
// JSON rather than sent as year 1.
package ctl

import (
	"context"
	"errors"
	"time"

	"cronvisor/internal/base/run"
)

// ErrUnknownJob means the daemon has no job by that name. The server
// answers it with 404; the Client turns that 404 back into it.
var ErrUnknownJob = errors.New("unknown job")

// ErrBadRequest means the request was malformed (a bad history query, say).
// The server answers it with 400; the Client turns that 400 back into it.
var ErrBadRequest = errors.New("bad request")

// ErrInUse means another live daemon already serves the socket. Listen
// returns it without touching that daemon's socket.
var ErrInUse = errors.New("control socket in use by another daemon")

// ErrRefused means a daemon serves the socket but refused this client: it
// serves only its own user and root. The server answers it with 403.
var ErrRefused = errors.New("refused by the daemon")

// ErrUntrusted means the socket is served by a process of a user other
// than this client's own or root, whose answers the client will not
// trust: whoever could plant the socket could answer anything.
var ErrUntrusted = errors.New("control socket served by another user")

// ErrNoLog means the run has no saved log (a skip, a run that never
// started, or a log already pruned). The server answers it with 404.
var ErrNoLog = errors.New("no saved log")

// ErrUnsupported means the daemon is older than the request: it does not
// know the query or answered it in its old form.
var ErrUnsupported = errors.New("not supported by this daemon")

// ErrNoDaemon means nothing listens on the socket: no file, or a stale file
// left by a daemon that died.
var ErrNoDaemon = errors.New("no daemon listening")

// Backend is what the daemon exposes through the socket. Its methods are
// called concurrently, one goroutine per request.
type Backend interface {
	Jobs(ctx context.Context) ([]JobStatus, error)
	// JobsNamed is Jobs for the named jobs only, in the daemon's order;
	// a name it does not know is left out.
	JobsNamed(ctx context.Context, names []string) ([]JobStatus, error)
	Locks(ctx context.Context) ([]LockStatus, error)
	// Resources lists the declared resources (jobs.yaml resources:), each
	// slot's holder and this daemon's fires waiting for one.
	Resources(ctx context.Context) ([]ResourceStatus, error)
	// History returns the records that match q, newest first.
	History(ctx context.Context, q HistoryQuery) ([]run.Record, error)
	// Log returns the end of a run's saved log, ErrNoLog when it has none.
	Log(ctx context.Context, job, runID string) (RunLog, error)
	// RunNow fires the job in the background, still under its lock, and
	// says what the fire did: started, or skipped or failed and why. A
	// paused or disabled job is refused unless o.Force.
	RunNow(ctx context.Context, job string, o FireOptions) (RunResult, error)
	// Trigger fires the job now as its schedule would: under its overlap
	// policy (queue waits, replace ends the run it owns). A paused or
	// disabled job is refused unless o.Force.
	Trigger(ctx context.Context, job string, o FireOptions) (RunResult, error)
	Pause(ctx context.Context, job string) error
	Resume(ctx context.Context, job string) error
	// Kill ends the job's runs, own and adopted, and (unless o.NoWait)
	// waits for their end up to their kill_grace and a margin, at most
	// KillWaitMax; it says where each run stands then.
	Kill(ctx context.Context, job string, o KillOptions) (KillResult, error)
	Reload(ctx context.Context) error
	// Daemon describes the daemon itself: shutting down, a refused reload.
	Daemon(ctx context.Context) (DaemonStatus, error)
	// Hosts is the fleet's hosts when the daemon's history is shared
	// (history_backend), as `status --fleet` prints them; Shared false
	// and no hosts when its history is its own.
	Hosts(ctx context.Context) (Hosts, error)
	// Subscribe returns live events on a channel the backend buffers (a
	// slow socket client must never block the runner) and a function that
	// ends the subscription. The backend may close the channel to end the
	// stream.
	Subscribe(ctx context.Context) (<-chan WireEvent, func())
}

// JobState is what a job is doing now.
type JobState string

// Job states.
const (
	StateIdle    JobState = "idle"
	StateRunning JobState = "running"
	StateQueued  JobState = "queued"
	// StateWaiting: a fire holds its lock and waits for a slot of a full
	// resource (on_full: wait); WaitingFor says which.
	StateWaiting  JobState = "waiting"
	StatePaused   JobState = "paused"
	StateDisabled JobState = "disabled"
	// StateRetrying: the slot's last attempt failed and the next one
	// (Attempt of MaxAttempts) starts at RetryAt, under the lock the slot
	// keeps.
	StateRetrying JobState = "retrying"
	// StateUnschedulable: no next fire could be computed; Problem says
	// after when, and the daemon keeps trying.
	StateUnschedulable JobState = "unschedulable"
)

// JobStatus is one job as the daemon sees it.
type JobStatus struct {
	Name     string   `json:"name"`
	Schedule string   `json:"schedule"`
	Timezone string   `json:"timezone"`
	State    JobState `json:"state"`
	// Paused is also set while a paused job's last run still runs (State
	// is then running), so that a client can show both.
	Paused bool `json:"paused"`
	// PausedBy says who paused the job and when; nil when not paused.
	PausedBy *PauseInfo `json:"paused_by,omitempty"`
	// RunID, PID, StartedAt and Deadline describe the current run.
	RunID     string    `json:"run_id"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at,omitzero"`
	Deadline  time.Time `json:"deadline,omitzero"`
	// LastOutcome is a history outcome (ok, failed, ...), "" if none yet.
	LastOutcome   run.Outcome `json:"last_outcome"`
	LastStartedAt time.Time   `json:"last_started_at,omitzero"`
	LastEndedAt   time.Time   `json:"last_ended_at,omitzero"`
	NextRun       time.Time   `json:"next_run,omitzero"`
	Lock          string      `json:"lock"`
	// Holder is who holds the job's lock, nil when it is free.
	Holder  *run.Holder `json:"holder"`
	Enabled bool        `json:"enabled"`
	Counts  Counts      `json:"counts"`
	// Problem says what keeps the job from being scheduled, "" if nothing.
	Problem string `json:"problem,omitempty"`
	// History is "history degraded since T: reason (N records waiting)"
	// while the daemon's history store fails (the same for every job:
	// their records wait in memory), "" while it works.
	History string `json:"history,omitempty"`
	// LastNotification is how the job's newest notification went
	// ("failure: ok at T", "timeout: failed at T: why"), and FailedPing
	// the newest ping that was not delivered; "" when none since the
	// daemon started (or no daemon runs).
	LastNotification string `json:"last_notification,omitempty"`
	// Attempt is the current run's attempt in its slot (retries), and
	// Slow says that it has passed the job's warn_after.
	Attempt    int    `json:"attempt,omitempty"`
	Slow       bool   `json:"slow,omitempty"`
	FailedPing string `json:"failed_ping,omitempty"`
	// MaxAttempts is the slot's attempts in all (retries + 1), set with
	// Attempt when the job retries; RetryAt is when the next attempt
	// starts while the slot waits for it (State retrying, Attempt then
	// that next attempt's number).
	MaxAttempts int       `json:"max_attempts,omitempty"`
	RetryAt     time.Time `json:"retry_at,omitzero"`
	// Adopted: the current run's supervisor died (SupervisorPID), and
	// this daemon answers for the run, which goes on with its keeper.
	Adopted       bool `json:"adopted,omitempty"`
	SupervisorPID int  `json:"supervisor_pid,omitempty"`
	// SlowReason says why the current run is slow: what it passed and
	// where that bound came from; "" when it is not slow.
	SlowReason string `json:"slow_reason,omitempty"`
	// Durations are what the job's successful runs took; nil when it has
	// none, or when the status was built without them (see Durations).
	Durations *Durations `json:"durations,omitempty"`
	// Progress and LastBeatAt are the current run's newest beat
	// (docs/heartbeats.md): its progress text ("" for a bare beat) and
	// when it came; zero before the run's first beat.
	Progress   string    `json:"progress,omitempty"`
	LastBeatAt time.Time `json:"last_beat_at,omitzero"`
	// Resources are the resource slots the current run holds ("db/1");
	// WaitingFor is what a fire of the job waits for (state waiting).
	Resources  []string `json:"resources,omitempty"`
	WaitingFor *Waiting `json:"waiting_for,omitempty"`
}

// Durations are the figures learned from a job's newest successful runs
// (at most 50, within the history's keep_age), in milliseconds; the
// rules are in docs/durations.md. The bounds and the advice are given
// from 10 runs on.
type Durations struct {
	Runs  int   `json:"runs"`
	P5MS  int64 `json:"p5_ms"`
	P50MS int64 `json:"p50_ms"`
	P95MS int64 `json:"p95_ms"`
	P99MS int64 `json:"p99_ms"`
	MaxMS int64 `json:"max_ms"`
	// SlowAfterMS is when a run is slow by the learned bound (warn_after:
	// auto), FastBelowMS when an ok run is fast by it (warn_fast: auto);
	// 0 when the job does not learn that bound or has too few runs.
	SlowAfterMS int64 `json:"slow_after_ms,omitempty"`
	FastBelowMS int64 `json:"fast_below_ms,omitempty"`
	// SuggestedTimeoutMS is a timeout drawn from the runs, and
	// TimeoutAdvice what is wrong with the job's own, "" when nothing.
	SuggestedTimeoutMS int64  `json:"suggested_timeout_ms,omitempty"`
	TimeoutAdvice      string `json:"timeout_advice,omitempty"`
	// RecentMS are the newest successful runs' durations (at most 16),
	// oldest first: the console's sparkline.
	RecentMS []int64 `json:"recent_ms,omitempty"`
}

// PauseInfo says who paused a job and when: the user and process at the
// other end of the control socket, or the embedded console's own.
type PauseInfo struct {
	User string    `json:"user"` // login name, else the uid in decimal
	UID  int       `json:"uid"`
	PID  int       `json:"pid"`
	Via  string    `json:"via"` // the process's command, e.g. "cronvisor ui"
	At   time.Time `json:"at,omitzero"`
}

// RunResult is what a run-now fire did by the time the daemon answered.
// Started means the run's process started (RunID names it); otherwise
// Outcome and Reason are the fire's record (skipped: lock held by …), or
// Outcome is "" when the fire had not decided yet.
type RunResult struct {
	RunID   string      `json:"run_id"`
	Started bool        `json:"started"`
	Outcome run.Outcome `json:"outcome,omitempty"`
	Reason  string      `json:"reason,omitempty"`
	// Refused: the daemon did not fire (Outcome "refused", Reason why):
	// Hold stands against the fire and it was not forced, or the daemon
	// is shutting down.
	Refused bool `json:"refused,omitempty"`
	// Hold is the job's pause or enabled: false: what refused the fire,
	// or what a forced one went past (Forced).
	Hold   *FireHold `json:"hold,omitempty"`
	Forced bool      `json:"forced,omitempty"`
}

// DaemonStatus is the daemon as a whole.
type DaemonStatus struct {
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at,omitzero"`
	// ShuttingDown is set once SIGTERM/SIGINT stopped new fires; the
	// daemon serves the socket until Finishing, the runs it waits for,
	// reaches 0 or shutdown_grace ends them.
	ShuttingDown bool `json:"shutting_down"`
	Finishing    int  `json:"finishing"`
	// Refused are the problems of the last reload while the jobs in
	// effect are an older file's; empty once a good file loads.
	Refused   []string  `json:"refused,omitempty"`
	RefusedAt time.Time `json:"refused_at,omitzero"`
	// Containment is how runs are contained: "cgroup v2 at PATH" or
	// "process tree (WHY)".
	Containment string `json:"containment,omitempty"`
}

// Hosts is GET /v1/hosts: the hosts of the fleet whose history the
// daemon shares, read from that history's server.
type Hosts struct {
	// Shared is false for a daemon whose history is its own: it knows
	// no other host, and Hosts is empty.
	Shared bool         `json:"shared"`
	Self   string       `json:"self,omitempty"` // the daemon's own host name
	Hosts  []HostStatus `json:"hosts"`
}

// HostStatus is one host of a fleet, by the shared history's server: its
// daemon's version and start, its last beat, its clock against the
// server's, and its runs the shared history has as running.
type HostStatus struct {
	Host      string    `json:"host"`
	State     string    `json:"state"` // up, stopped, lost
	Version   string    `json:"version"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at,omitzero"`
	// LastBeat is zero for a host that never beat but has runs in the
	// shared history; SilentMS is its age by the server's clock, so that
	// no host's own clock skews it.
	LastBeat      time.Time `json:"last_beat,omitzero"`
	SilentMS      int64     `json:"silent_ms"`
	ClockOffsetMS int64     `json:"clock_offset_ms"` // its clock minus the server's
	Running       []HostRun `json:"running"`
}

// HostRun is a run the shared history has as running on a host.
type HostRun struct {
	Job       string    `json:"job"`
	RunID     string    `json:"run_id"`
	StartedAt time.Time `json:"started_at,omitzero"`
}

// Counts are a job's history records since a point in time.
type Counts struct {
	Since    time.Time `json:"since,omitzero"`
	Runs     int       `json:"runs"`
	Skips    int       `json:"skips"`
	Failures int       `json:"failures"` // failed, timeout and error outcomes
}

// LockStatus is one lock. For a free lock the holder fields are the last
// record, if any.
type LockStatus struct {
	Lock          string    `json:"lock"`
	Held          bool      `json:"held"`
	PID           int       `json:"pid"`
	Host          string    `json:"host"`
	Job           string    `json:"job"`
	RunID         string    `json:"run_id"`
	Slot          time.Time `json:"slot,omitzero"`
	Since         time.Time `json:"since,omitzero"`
	SupervisorPID int       `json:"supervisor_pid"`
	Foreign       bool      `json:"foreign"`
	Cmdline       string    `json:"cmdline"`
}

// HistoryQuery selects history records; zero fields do not filter.
type HistoryQuery struct {
	Job      string
	Outcomes []run.Outcome // any of these outcomes
	Since    time.Time
	Limit    int // 0: the backend's default
}

// LogTail is how much of a saved run log a RunLog carries: its end, which
// is where a failure explains itself.
const LogTail = 256 << 10

// RunLog is the end of one run's saved log, at most LogTail bytes of it.
type RunLog struct {
	Job   string `json:"job"`
	RunID string `json:"run_id"`
	// Lines are the log's lines as saved: "STREAM | TEXT", with the
	// stream's tag (stdout, stderr), or a note of cronvisor's own.
	Lines []string `json:"lines"`
	// Omitted is how many bytes at the start of the log were left out.
	Omitted int64 `json:"omitted,omitempty"`
}

// errorBody is the JSON of every error answer.
type errorBody struct {
	Error string `json:"error"`
	// Code tells a client which sentinel the error matches, so that a 404
	// from an unknown route is not mistaken for an unknown job.
	Code string `json:"code,omitempty"`
}

// Error codes of errorBody.
const (
	codeUnknownJob = "unknown_job"
	codeBadRequest = "bad_request"
	codeRefused    = "refused"
	codeNoLog      = "no_log"
)
