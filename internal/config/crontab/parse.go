// Package crontab reads crontabs, the user format (crontab -e) and the
// system format with a user field (/etc/crontab, /etc/cron.d/*), as
// crontab(5) defines them for Vixie cron (cronie, Debian's cron), and
// translates them into jobs.yaml values. It does no I/O beyond what it is
// handed: the text, and a function to look up users' home directories.
package crontab

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Tab is a parsed crontab: its entries with the environment in effect at
// each, and the lines that are neither.
type Tab struct {
	Entries []Entry
	Env     []Var     // every environment line, in order
	Bad     []Problem // lines that are neither an entry, a variable, a comment nor blank
	Tail    []string  // comments after the last entry
}

// Entry is one job line.
type Entry struct {
	Line     int    // 1-based
	Schedule string // five fields joined by single spaces, or an @descriptor
	User     string // the system format's user field; "" in a user crontab
	Command  string // the rest of the line, % rule not yet applied
	Env      []Var  // the variables set above it, in order (later ones win)
	Comments []string
	Text     string // the line as written
}

// Var is an environment line: NAME=VALUE.
type Var struct {
	Line        int
	Name, Value string
}

// Problem is a line that was not translated, and why.
type Problem struct {
	Line int
	Why  string
}

// envLine matches NAME = VALUE as cron's load_env reads it: a name without
// blanks or '=', blanks allowed around the '='. An entry never matches: its
// first field is followed by a blank and another field, not by '='.
var envLine = regexp.MustCompile(`^\s*([^\s=]+)\s*=(.*)$`)

// Parse reads a crontab; system selects the format with a user field.
func Parse(text string, system bool) *Tab {
	tab := &Tab{}
	var comments []string
	var env []Var
	for i, raw := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		n := i + 1
		line := strings.TrimSuffix(raw, "\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			continue
		case !utf8.ValidString(line) || strings.IndexByte(line, 0) >= 0:
			// jobs.yaml is text, and a NUL cannot reach execve.
			tab.Bad = append(tab.Bad, Problem{n, "not valid UTF-8 text, or holds a NUL byte; left out"})
			continue
		case strings.HasPrefix(trimmed, "#"):
			comments = append(comments, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
			continue
		}
		if m := envLine.FindStringSubmatch(line); m != nil {
			v := Var{Line: n, Name: m[1], Value: envValue(m[2])}
			env = append(env, v)
			tab.Env = append(tab.Env, v)
			continue
		}
		e, why := entry(line, system)
		if why != "" {
			tab.Bad = append(tab.Bad, Problem{n, why})
			continue
		}
		e.Line, e.Text, e.Comments = n, trimmed, comments
		e.Env = append([]Var(nil), env...)
		comments = nil
		tab.Entries = append(tab.Entries, e)
	}
	tab.Tail = comments
	return tab
}

// envValue is a variable's value: blanks around it dropped, and one pair
// of matching quotes (' or ") around the whole of it removed, as cron does.
func envValue(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// entry splits a job line into its schedule, user and command.
func entry(line string, system bool) (Entry, string) {
	rest := strings.TrimLeft(line, " \t")
	var e Entry
	var f string
	if strings.HasPrefix(rest, "@") {
		f, rest = field(rest)
		e.Schedule = f
	} else {
		fields := make([]string, 0, 5)
		for len(fields) < 5 && rest != "" {
			f, rest = field(rest)
			fields = append(fields, f)
		}
		if len(fields) < 5 || rest == "" {
			return e, "not an entry (five time fields and a command), an environment setting or a comment"
		}
		e.Schedule = strings.Join(fields, " ")
	}
	if system {
		e.User, rest = field(rest)
		if e.User == "" {
			return e, "no user field (the system crontab format is: schedule, user, command)"
		}
	}
	e.Command = strings.TrimSpace(rest)
	if e.Command == "" {
		return e, "no command"
	}
	return e, ""
}

// field returns the first blank-separated field of s and the text after it
// with leading blanks removed.
func field(s string) (string, string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}
