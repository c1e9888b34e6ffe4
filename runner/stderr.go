package runner

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"cronvisor/internal/base/run"
)

// maxStderrReason bounds the stderr line quoted in a reason: a reason is
// one line of a table, not the run's log.
const maxStderrReason = 200

// lastStderr keeps a run's last non-blank stderr line, so a failed run's
// reason says why in the job's own words. proc serializes OnOutput calls
// and makes none after Run returns, so it needs no lock.
type lastStderr struct{ line string }

// see takes one OnOutput call: lines joined by LF.
func (l *lastStderr) see(stream, lines string) {
	if stream != "stderr" {
		return
	}
	lines = strings.TrimRight(lines, " \t\r\n")
	if lines == "" {
		return
	}
	l.line = strings.TrimSpace(lines[strings.LastIndexByte(lines, '\n')+1:])
}

// annotate adds the line to a failed run's reason:
// `exit 3: last stderr: "connection refused"`.
func (l *lastStderr) annotate(f *run.End) {
	if f.Outcome != run.Failed || l.line == "" {
		return
	}
	why := f.Reason
	if why == "" && f.ExitCode != nil {
		why = fmt.Sprintf("exit %d", *f.ExitCode)
	}
	line := l.line
	if len(line) > maxStderrReason {
		line = line[:maxStderrReason]
		for !utf8.ValidString(line) { // do not cut a character in two
			line = line[:len(line)-1]
		}
		line += "..."
	}
	f.Reason = fmt.Sprintf("%s: last stderr: %q", why, line)
}
