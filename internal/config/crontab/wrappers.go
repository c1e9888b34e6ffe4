package crontab

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// unwrapped is a command with the wrappers cronvisor does itself taken off
// and turned into job settings.
type unwrapped struct {
	command   string
	dir       string        // from cd DIR &&
	lockPath  string        // from flock; the job's lock is named after it
	overlap   string        // from flock: skip (-n) or queue
	timeout   time.Duration // from timeout(1)
	killGrace *time.Duration
	notes     []string // what a reader of the YAML should know
}

// unwrap takes off, in any order and nesting, `cd DIR &&`, `flock ...
// LOCKFILE` and `timeout ... DURATION`, and trailing redirections to
// /dev/null. A wrapper whose options it does not know, or whose command is
// not a simple command (so that the wrapper applies to part of the line
// only), is left in the command as written: it still works there.
func unwrap(cmd string) unwrapped {
	u := unwrapped{command: cmd}
	for {
		u.command = u.dropDevNull(u.command)
		ws, ok := words(u.command)
		if !ok || len(ws) < 2 || !ws[0].literal {
			return u
		}
		var rest string
		switch filepath.Base(ws[0].val) {
		case "cd":
			if u.dir != "" || len(ws) < 4 || ws[2].raw != "&&" || !ws[1].literal || !filepath.IsAbs(ws[1].val) {
				return u
			}
			u.dir = filepath.Clean(ws[1].val)
			rest = u.command[ws[3].start:]
		case "flock":
			if u.lockPath != "" {
				return u
			}
			if rest, ok = u.flock(u.command, ws); !ok {
				return u
			}
		case "timeout":
			if u.timeout != 0 {
				return u
			}
			if rest, ok = u.timeoutCmd(u.command, ws); !ok {
				return u
			}
		default:
			return u
		}
		u.command = strings.TrimSpace(rest)
	}
}

// devNull matches redirections of stdout and stderr to /dev/null at the
// end of a command: `>/dev/null 2>&1`, `> /dev/null`, `&>/dev/null`, `2>/dev/null`.
var devNull = regexp.MustCompile(`(?:\s+(?:[12]?>>?|&>>?)\s*/dev/null|\s+2>&1|\s+1>&2)+\s*$`)

// dropDevNull removes trailing redirections to /dev/null. Under cron they
// keep a job's output out of the mail; cronvisor sends no mail and keeps
// output in the run's log (within log_limit), where it helps.
func (u *unwrapped) dropDevNull(cmd string) string {
	loc := devNull.FindStringIndex(cmd)
	if loc == nil || !strings.Contains(cmd[loc[0]:], "/dev/null") || !simpleTail(cmd[:loc[0]]) {
		return cmd
	}
	u.notes = append(u.notes, fmt.Sprintf("output was sent to /dev/null (%s); cronvisor keeps it in the run's log", strings.TrimSpace(cmd[loc[0]:])))
	return strings.TrimRight(cmd[:loc[0]], " \t")
}

// simpleTail reports whether the text before a trailing redirection ends
// outside quotes, so that the redirection is the shell's and not a quoted
// argument's.
func simpleTail(s string) bool {
	_, ok := words(s)
	return ok && !strings.HasSuffix(s, "\\")
}

var (
	flockFlags = regexp.MustCompile(`^-[xneo]+$`)  // -xn, -nx, -no ...
	flockWait  = regexp.MustCompile(`^-w[0-9.]+$`) // -w5
)

// flock reads `flock [-n|-x|-w N|-E N|-o] FILE (CMD ARGS...|-c CMDLINE)`.
func (u *unwrapped) flock(cmd string, ws []word) (string, bool) {
	overlap, wait := "queue", ""
	i := 1
	for ; i < len(ws) && strings.HasPrefix(ws[i].val, "-") && ws[i].literal; i++ {
		opt, val, hasVal := strings.Cut(ws[i].val, "=")
		switch {
		case opt == "-n" || opt == "--nb" || opt == "--nonblock":
			overlap = "skip"
		case opt == "-x" || opt == "-e" || opt == "--exclusive" || opt == "-o" || opt == "--close":
		case opt == "-w" || opt == "--wait" || opt == "--timeout" || opt == "-E" || opt == "--conflict-exit-code":
			if !hasVal {
				if i+1 >= len(ws) {
					return "", false
				}
				i++
				val = ws[i].val
			}
			if opt != "-E" && opt != "--conflict-exit-code" {
				wait = val
			}
		case flockFlags.MatchString(opt):
			if strings.Contains(opt, "n") {
				overlap = "skip"
			}
		case flockWait.MatchString(opt):
			wait = opt[2:]
		default:
			return "", false // -s (shared), -u, or an option unknown here
		}
	}
	if i+1 >= len(ws) || !ws[i].literal {
		return "", false
	}
	path := ws[i].val
	var rest string
	switch next := ws[i+1]; {
	case next.val == "-c" || next.val == "--command":
		if i+3 != len(ws) {
			return "", false
		}
		rest = ws[i+2].val
	default:
		rest = cmd[next.start:]
		if !simple(rest) {
			return "", false
		}
	}
	if f, err := strconv.ParseFloat(wait, 64); err == nil && f == 0 {
		overlap = "skip" // -w 0 gives up at once, as -n does
	}
	if wait != "" && overlap == "queue" {
		u.notes = append(u.notes, fmt.Sprintf("flock waited up to %ss for the lock; a queued fire waits until it is free", wait))
	}
	u.lockPath, u.overlap = path, overlap
	return rest, true
}

// timeoutCmd reads `timeout [-s SIG] [-k K] [--preserve-status]
// [--foreground] DURATION CMD ARGS...`. Only TERM (cronvisor's first
// signal) and KILL (then with no grace) translate.
func (u *unwrapped) timeoutCmd(cmd string, ws []word) (string, bool) {
	sig, kill, i, ok := timeoutOptions(ws)
	if !ok || i+1 >= len(ws) {
		return "", false
	}
	d, err := timeoutDuration(ws[i].val)
	if err != nil || d <= 0 {
		return "", false
	}
	grace, ok := timeoutGrace(sig, kill)
	if !ok {
		return "", false
	}
	rest := cmd[ws[i+1].start:]
	if !simple(rest) {
		return "", false
	}
	if kill == "" && grace == nil {
		u.notes = append(u.notes, "timeout(1) sent no SIGKILL without -k; cronvisor sends one after kill_grace")
	}
	u.timeout, u.killGrace = d, grace
	return rest, true
}

// timeoutOptions reads timeout(1)'s options: the signal, the -k delay
// ("" without one) and the index of DURATION; false for an option
// cronvisor cannot translate.
func timeoutOptions(ws []word) (sig, kill string, i int, ok bool) {
	sig = "TERM"
	for i = 1; i < len(ws) && strings.HasPrefix(ws[i].val, "-") && ws[i].literal; i++ {
		opt, val, hasVal := strings.Cut(ws[i].val, "=")
		switch {
		case opt == "--preserve-status" || opt == "--foreground" || opt == "-v" || opt == "--verbose":
		case opt == "-s" || opt == "--signal" || opt == "-k" || opt == "--kill-after":
			if !hasVal {
				if i+1 >= len(ws) {
					return "", "", 0, false
				}
				i++
				val = ws[i].val
			}
			if opt == "-s" || opt == "--signal" {
				sig = val
			} else {
				kill = val
			}
		case len(opt) > 2 && (opt[:2] == "-s" || opt[:2] == "-k") && opt[1] != '-':
			if opt[1] == 's' {
				sig = opt[2:]
			} else {
				kill = opt[2:]
			}
		default:
			return "", "", 0, false
		}
	}
	return sig, kill, i, true
}

// timeoutGrace is the kill_grace timeout(1)'s signal and -k delay mean:
// nil for cronvisor's default; false for a signal other than TERM or KILL.
func timeoutGrace(sig, kill string) (*time.Duration, bool) {
	switch strings.TrimPrefix(strings.ToUpper(sig), "SIG") {
	case "TERM", "15":
		if kill == "" {
			return nil, true
		}
		k, err := timeoutDuration(kill)
		if err != nil {
			return nil, false
		}
		return &k, true
	case "KILL", "9":
		zero := time.Duration(0)
		return &zero, true
	}
	return nil, false
}

// timeoutDuration reads timeout(1)'s DURATION: a number, maybe with a
// fraction, and an optional unit s, m, h or d (seconds by default).
func timeoutDuration(s string) (time.Duration, error) {
	unit := time.Second
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 's':
			s = s[:n-1]
		case 'm':
			unit, s = time.Minute, s[:n-1]
		case 'h':
			unit, s = time.Hour, s[:n-1]
		case 'd':
			unit, s = 24*time.Hour, s[:n-1]
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1e6*24*3600 {
		return 0, fmt.Errorf("bad duration %q", s)
	}
	return time.Duration(f * float64(unit)), nil
}

// formatDuration writes d the way a person would: 90s, 5m, 2h, 1h30m.
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0 && d < time.Hour:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0 && d < time.Minute:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	s := d.String() // 1h30m0s, 2m30.5s
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
