package statedir

import (
	"path/filepath"
	"strings"
)

// Dir is a state dir, the one place that names the paths in it: every
// package that writes or reads the state dir asks its Dir for the path
// rather than joining names itself, so the layout below is written once.
// Some of it is the outside contract (locks/LOCK.lock, logs/, the history
// database, the socket): a name here changes only with the contract.
//
//	STATE_DIR/
//	  history.db            the history store (history.Open)
//	  cronvisor.sock        the control socket (ctl.Listen)
//	  cronvisor.sock.lock   its flock, taken by ctl.Listen beside the socket
//	  cronvisor.log         an embedded console's log (and cronvisor.log.1)
//	  paused.json           the pauses in effect, and paused.json.lock
//	  jobs.applied.yaml     the jobs.yaml the daemon last applied (reload --dry-run)
//	  locks/LOCK.lock       the file lock backend's locks
//	  logs/JOB/RUN_ID.log   the output of each run
//	  spool/                the history writers' spools
//	  cursors/              the file lock backend's cursor journals
//	  runs/RUN_ID.end       the Ends keepers write for runs whose supervisor died
//	  runs/SLOT.guard       how to guard a run whose supervisor and keeper both died
type Dir string

// Names in the state dir, relative to it.
const (
	historyFile = "history.db"
	socketFile  = "cronvisor.sock"
	consoleLog  = "cronvisor.log"
	pausesFile  = "paused.json"
	appliedFile = "jobs.applied.yaml"
	locksDir    = "locks"
	logsDir     = "logs"
	spoolDir    = "spool"
	cursorsDir  = "cursors"
	keepersDir  = "runs"
	lockSuffix  = ".lock"
	logSuffix   = ".log"
	endSuffix   = ".end"
	guardSuffix = ".guard"
)

// String is the state dir itself.
func (d Dir) String() string { return string(d) }

func (d Dir) join(names ...string) string {
	return filepath.Join(append([]string{string(d)}, names...)...)
}

// History is the history database.
func (d Dir) History() string { return d.join(historyFile) }

// Socket is the control socket.
func (d Dir) Socket() string { return d.join(socketFile) }

// SocketLock is the flock that ctl.Listen takes beside the socket, so that
// one daemon at a time serves it.
func (d Dir) SocketLock() string { return d.Socket() + lockSuffix }

// ConsoleLog is the log of a console that runs the scheduler in-process
// (its terminal is the TUI); it is rotated to ConsoleLog()+".1".
func (d Dir) ConsoleLog() string { return d.join(consoleLog) }

// Pauses is the file of the pauses in effect, so that a restarted daemon
// keeps them.
func (d Dir) Pauses() string { return d.join(pausesFile) }

// PausesLock is the flock under which daemons sharing the state dir change
// Pauses one at a time.
func (d Dir) PausesLock() string { return d.Pauses() + lockSuffix }

// Applied is the copy of the jobs.yaml the daemon last applied, which
// `reload --dry-run` compares the file with.
func (d Dir) Applied() string { return d.join(appliedFile) }

// Locks is the directory of the file lock backend.
func (d Dir) Locks() string { return d.join(locksDir) }

// LockFile is the file lock backend's file of lock name: STATE_DIR/locks/NAME.lock.
func (d Dir) LockFile(name string) string { return d.join(locksDir, name+lockSuffix) }

// Logs is the directory of the runs' output.
func (d Dir) Logs() string { return d.join(logsDir) }

// JobLogs is the directory of job's run logs.
func (d Dir) JobLogs(job string) string { return d.join(logsDir, job) }

// RunLog is where the output of a run is kept: STATE_DIR/logs/JOB/RUN_ID.log.
func (d Dir) RunLog(job, runID string) string { return d.join(logsDir, job, runID+logSuffix) }

// Spool is the directory of the history writers' spools.
func (d Dir) Spool() string { return d.join(spoolDir) }

// Cursors is the directory of the file lock backend's cursor journals,
// one per process that makes slot cursors durable.
func (d Dir) Cursors() string { return d.join(cursorsDir) }

// Keepers holds the Ends that keepers write for runs whose supervisor
// died (proc.WriteEnd), one file per run, until a supervisor records them.
func (d Dir) Keepers() string { return d.join(keepersDir) }

// RunEnd is where the keeper of run runID writes its End.
func (d Dir) RunEnd(runID string) string { return d.join(keepersDir, runID+endSuffix) }

// RunLogID is the run id of a file name in JobLogs, false when the name is
// not a run log's.
func RunLogID(name string) (string, bool) { return strings.CutSuffix(name, logSuffix) }

// RunEndID is the run id of a file name in Keepers, false when the name is
// not an End's.
func RunEndID(name string) (string, bool) { return strings.CutSuffix(name, endSuffix) }

// Guard is the guard file of slot: what the next supervisor needs to guard a
// run if its supervisor and its keeper both die. A supervisor reuses
// its slots run after run (a rewrite, not a file's creation and
// removal); slot names the supervisor and the slot (see proc).
func (d Dir) Guard(slot string) string { return d.join(keepersDir, slot+guardSuffix) }

// GuardSlot is the slot of a Guard file's name; false for another name.
func GuardSlot(name string) (string, bool) { return strings.CutSuffix(name, guardSuffix) }

// GuardBeside is the guard file of slot in the state dir whose runs' Ends go
// beside end (Dir.RunEnd): a keeper's supervisor knows its state dir by
// that path alone.
func GuardBeside(end, slot string) string {
	return filepath.Join(filepath.Dir(end), slot+guardSuffix)
}
