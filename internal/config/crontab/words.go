package crontab

import "strings"

// word is one shell word of a command: its text as written, its value
// with quotes removed, and where it starts and ends.
type word struct {
	raw, val   string
	start, end int
	literal    bool // no expansion can change it: no $, `, glob or leading ~
}

// words splits the start of a command into shell words at unquoted blanks,
// as far as it can follow the quoting; ok is false on an unterminated
// quote. Operators are words too ("&&"); callers look only for the few
// shapes they translate and leave anything else as written.
func words(s string) (ws []word, ok bool) {
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return ws, true
		}
		w, end, ok := scanWord(s, i)
		if !ok {
			return ws, false
		}
		ws = append(ws, w)
		i = end
	}
}

func scanWord(s string, start int) (word, int, bool) {
	var val strings.Builder
	literal := s[start] != '~'
	i := start
	for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' {
		switch c := s[i]; c {
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return word{}, 0, false
			}
			val.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				} else if s[i] == '$' || s[i] == '`' {
					literal = false
				}
				val.WriteByte(s[i])
				i++
			}
			if i >= len(s) {
				return word{}, 0, false
			}
			i++
		case '\\':
			if i+1 < len(s) {
				i++
			}
			val.WriteByte(s[i])
			i++
		default:
			if strings.IndexByte("$`*?[", c) >= 0 {
				literal = false
			}
			val.WriteByte(c)
			i++
		}
	}
	return word{raw: s[start:i], val: val.String(), start: start, end: i, literal: literal}, i, true
}

// simple reports whether s, as the shell reads it, is one simple command
// (redirections allowed): no unquoted list, pipe, background, subshell or
// command substitution. Only then does a wrapper that execs its argv
// (flock, timeout) apply to all of s, so that removing it changes nothing.
func simple(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			i++
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return false
			}
			i += j + 1
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				} else if s[i] == '`' || s[i] == '$' && i+1 < len(s) && s[i+1] == '(' {
					return false
				}
			}
		case ';', '|', '(', ')', '`', '\n', '{', '}':
			return false
		case '$':
			if i+1 < len(s) && s[i+1] == '(' {
				return false
			}
		case '&':
			// >&2, &> and <& are redirections; any other & is a list or
			// a background job.
			if !(i > 0 && (s[i-1] == '>' || s[i-1] == '<') || i+1 < len(s) && s[i+1] == '>') {
				return false
			}
		}
	}
	return true
}
