package config

import (
	"fmt"
	"io"
	"sort"
)

// String formats p the way compilers do, so editors can jump to it:
// PATH:LINE:COL: message. A problem with no position (the file could not be
// read) prints as PATH: message.
func (p Problem) String() string {
	msg := p.Message
	if p.Warning {
		msg = "warning: " + msg
	}
	if p.Line <= 0 {
		return fmt.Sprintf("%s: %s", p.Path, msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.Path, p.Line, p.Col, msg)
}

// Errors returns the problems that make a file invalid, leaving out
// warnings.
func Errors(ps []Problem) []Problem {
	var errs []Problem
	for _, p := range ps {
		if !p.Warning {
			errs = append(errs, p)
		}
	}
	return errs
}

// HasErrors reports whether any problem is an error rather than a warning.
func HasErrors(ps []Problem) bool {
	return len(Errors(ps)) > 0
}

// Report writes one line per problem, for `cronvisor validate` and for the
// daemon's log of a refused reload. Write errors are ignored: there is
// nowhere left to report them.
func Report(w io.Writer, ps []Problem) {
	for _, p := range ps {
		fmt.Fprintln(w, p.String())
	}
}

// tidy sorts problems by position and drops exact repeats. Repeats are
// expected: a bad value in defaults is checked again for every job that
// inherits it, and should still be reported once.
func tidy(ps []Problem) []Problem {
	sort.SliceStable(ps, func(i, k int) bool {
		if ps[i].Line != ps[k].Line {
			return ps[i].Line < ps[k].Line
		}
		return ps[i].Col < ps[k].Col
	})
	out := ps[:0]
	seen := make(map[Problem]bool, len(ps))
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
