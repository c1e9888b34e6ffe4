package proc

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// The keeper's protocol: every message between a supervisor and its
// keeper process is written and read here, and nowhere else.
//
// The control socket (SOCK_SEQPACKET, one per keeper process):
//
//	keeper → supervisor   "ready"                once, when it serves
//	supervisor → keeper   ARG NUL ARG NUL ...    one run per packet: its keeperArgs,
//	                                             with its descriptors (tether, stdout,
//	                                             stderr, then -lock's and -session's)
//	supervisor → keeper   "sweep"                look at the deferred runs' tethers
//	                                             (keepersweep.go)
//
// The mailbox (SOCK_SEQPACKET, one per keeper process, read only when
// the keeper sweeps; see keeperdefer.go):
//
//	supervisor → keeper   "run"                  a deferred run: its tether's keeper end
//	                                             comes with it
//
// A deferred run's tether (SOCK_SEQPACKET) holds, unread until the
// keeper takes it over, the run's packet (as on the control socket but
// for the tether itself, and with -exit-slot) and then its "pid N
// STARTNS" line with its pidfd. The supervisor takes both back at the
// run's end; its end's closing with the packet still there is its
// death, or a detach.
//
// A run's tether (SOCK_STREAM, one per run), one message a line:
//
//	supervisor → keeper   "lease B64"            the lease's hand-over, before the run
//	                      "pid N STARTNS"        the run started; its pidfd comes with it
//	                      "stop"                 the run is over: let go of it
//	keeper → supervisor   "exited NS"            when the keeper saw the main process exit
//
// The tether's end of file without "stop" is the supervisor's death.
//
// The keeper socket (abstract, keeperAddress; one request line per
// connection, answered until the keeper closes it):
//
//	"runs"                → "RUN_ID SUPERVISOR_PID JOB" a line per kept run
//	"end RUN_ID"          → "ok", or "unknown" for a run it does not keep
//	"replace RUN_ID"      → the same, ended as replaced by a newer fire
//	"watch RUN_ID"        → nothing: closed once the keeper let go of the run

// msgReady is a new keeper process's first message on its control socket.
const msgReady = "ready"

// msgSweep asks a keeper to sweep its deferred runs; msgRun mails one.
const (
	msgSweep = "sweep"
	msgRun   = "run"
)

// encodeHandover is the control socket's message handing a keeper a run.
func encodeHandover(args []string) []byte { return []byte(strings.Join(args, "\x00")) }

// decodeHandover is the run's keeperArgs of a hand-over message.
func decodeHandover(msg []byte) []string { return strings.Split(string(msg), "\x00") }

// The kinds of tether messages.
const (
	tetherNone   = iota // not a message: ignored
	tetherLease         // handoff
	tetherPID           // pid, started (zero if not told)
	tetherStop          // the run is over
	tetherExited        // at
)

// tetherMsg is one line of a tether.
type tetherMsg struct {
	kind    int
	pid     int
	started time.Time
	handoff []byte
	at      time.Time
}

func leaseLine(handoff []byte) string {
	return "lease " + base64.StdEncoding.EncodeToString(handoff) + "\n"
}

func pidLine(pid int, started time.Time) string {
	return "pid " + strconv.Itoa(pid) + " " + strconv.FormatInt(started.UnixNano(), 10) + "\n"
}

const stopLine = "stop\n"

func exitedLine(at time.Time) string {
	return "exited " + strconv.FormatInt(at.UnixNano(), 10) + "\n"
}

// parseTetherLine reads one line of a tether (its newline optional); a
// line that is no well-formed message is tetherNone.
func parseTetherLine(line string) tetherMsg {
	f := strings.Fields(line)
	var none tetherMsg
	switch {
	case len(f) == 1 && f[0] == "stop":
		return tetherMsg{kind: tetherStop}
	case len(f) == 2 && f[0] == "lease":
		b, err := base64.StdEncoding.DecodeString(f[1])
		if err != nil {
			return none
		}
		return tetherMsg{kind: tetherLease, handoff: b}
	case len(f) == 2 && f[0] == "exited":
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return none
		}
		return tetherMsg{kind: tetherExited, at: time.Unix(0, ns)}
	case (len(f) == 2 || len(f) == 3) && f[0] == "pid":
		return parsePIDLine(f)
	}
	return none
}

// parsePIDLine reads "pid N [STARTNS]"; N must be a pid, above 0.
func parsePIDLine(f []string) tetherMsg {
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return tetherMsg{}
	}
	m := tetherMsg{kind: tetherPID, pid: pid}
	if len(f) == 3 {
		if ns, err := strconv.ParseInt(f[2], 10, 64); err == nil {
			m.started = time.Unix(0, ns)
		}
	}
	return m
}

// parseTether reads the whole lines of a chunk read from a tether.
func parseTether(chunk string) []tetherMsg {
	var out []tetherMsg
	for _, line := range strings.Split(chunk, "\n") {
		if m := parseTetherLine(line); m.kind != tetherNone {
			out = append(out, m)
		}
	}
	return out
}

// parseExited reads a keeper's "exited NS" message; zero if it is not
// one.
func parseExited(chunk string) time.Time {
	for _, m := range parseTether(chunk) {
		if m.kind == tetherExited {
			return m.at
		}
	}
	return time.Time{}
}

// The keeper socket's verbs and answers.
const (
	verbRuns      = "runs"
	verbEnd       = "end"
	verbReplace   = "replace"
	verbWatch     = "watch"
	answerOK      = "ok"
	answerUnknown = "unknown"
)

// request is a keeper socket's request line; runID is empty for "runs".
func request(verb, runID string) string {
	if runID == "" {
		return verb + "\n"
	}
	return verb + " " + runID + "\n"
}

// parseRequest reads a request line.
func parseRequest(line string) (verb, runID string) {
	verb, runID, _ = strings.Cut(strings.TrimSpace(line), " ")
	return verb, runID
}

// runsLine is one line of the answer to "runs".
func runsLine(k KeptInfo) string {
	return k.RunID + " " + strconv.Itoa(k.SupervisorPID) + " " + k.Job + "\n"
}

// parseRuns reads the answer to "runs", skipping lines that are not one
// of its (a job's name is the rest of the line).
func parseRuns(answer string) []KeptInfo {
	var out []KeptInfo
	for _, line := range strings.Split(answer, "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 || f[0] == "" {
			continue
		}
		sup, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		out = append(out, KeptInfo{RunID: f[0], SupervisorPID: sup, Job: f[2]})
	}
	return out
}
