package crontab

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// prefixes run the command that follows them; the job is named after that.
var prefixes = map[string]bool{"nice": true, "ionice": true, "nohup": true, "env": true, "exec": true,
	"chronic": true, "sudo": true, "time": true, "setlock": true, "systemd-cat": true, "cronic": true}

// interpreters run the script that follows them; the job is named after it.
var interpreters = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true,
	"php": true, "python": true, "python2": true, "python3": true, "perl": true, "ruby": true,
	"node": true, "nodejs": true}

// guards are commands that set up, wait or test before the one that
// matters (`sleep 30; x` is the usual half-minute offset).
var guards = map[string]bool{"cd": true, "test": true, "[": true, "[[": true, "sleep": true}

// keywords of the shell's compound commands are not programs.
var keywords = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true,
	"done": true, "while": true, "until": true, "!": true, "(": true, ")": true, "{": true, "}": true, "&&": true, "||": true, ";": true}

var separators = map[string]bool{"&&": true, "||": true, ";": true}

var runParts = regexp.MustCompile(`run-parts(?:\s+--?[A-Za-z-]+(?:=\S+)?)*\s+(\S+)`)

// baseName is the name a command suggests: the program it runs (the script
// for an interpreter, the directory for run-parts), without its directory
// and extension, and its first argument when that is a plain word (a
// subcommand such as `artisan schedule:run`).
func baseName(cmd string) (name, arg string) {
	if m := runParts.FindStringSubmatch(cmd); m != nil {
		return filepath.Base(strings.Trim(m[1], `'")`)), ""
	}
	ws, _ := words(cmd)
	i := 0
	for i < len(ws) {
		w := ws[i].val
		b := filepath.Base(w)
		switch {
		case guards[w]:
			// `cd DIR && x`, `test -x X && X`: named after what runs next.
			j := i + 1
			for j < len(ws) && !separators[ws[j].raw] && !strings.HasSuffix(ws[j].raw, ";") {
				j++
			}
			if j+1 >= len(ws) {
				return sanitize(w), ""
			}
			i = j + 1
			continue
		case keywords[w], isAssignment(w), strings.HasPrefix(w, "-"), isNumber(w):
			i++
			continue
		case prefixes[b]:
			i++
			if b == "sudo" || b == "ionice" || b == "nice" {
				for i < len(ws) && strings.HasPrefix(ws[i].val, "-") {
					if ws[i].val == "-u" || ws[i].val == "-n" || ws[i].val == "-c" {
						i++
					}
					i++
				}
			}
			continue
		case interpreters[b] && i+1 < len(ws):
			j := i + 1
			for j < len(ws) && strings.HasPrefix(ws[j].val, "-") {
				j++
			}
			if j < len(ws) && ws[j].val != "" {
				i, b = j, filepath.Base(ws[j].val)
			}
		}
		ended := strings.TrimRight(b, ";&|)") != b // `x;`: the command ends with its name
		b = strings.TrimRight(b, ";&|)")
		name = strings.TrimSuffix(b, filepath.Ext(b))
		if name == "" {
			name = b
		}
		if target := toolTarget(ws, i+1); tools[name] && !ended && target != "" {
			name += "_" + target
		}
		if !ended && i+1 < len(ws) && plainArg.MatchString(ws[i+1].val) {
			arg = ws[i+1].val
		}
		return name, arg
	}
	return "job", ""
}

// tools are programs whose name says little of a job: `find`, `curl`,
// `tar` run in many. Their job is named after what they work on as well:
// find_log for `find /var/log ...`, curl_ping for `curl .../ping`.
var tools = map[string]bool{"curl": true, "wget": true, "find": true, "tar": true, "rsync": true, "cp": true,
	"mv": true, "rm": true, "gzip": true, "zip": true, "mysqldump": true, "pg_dump": true, "pg_dumpall": true,
	"psql": true, "mysql": true, "docker": true, "kubectl": true, "git": true, "scp": true, "rclone": true,
	"restic": true, "borg": true, "logrotate": true}

// toolTarget is the base name, without extension, of the first path or
// URL among the words from i to the end of the simple command, leaving
// out redirections and /dev; "" when there is none.
func toolTarget(ws []word, i int) string {
	for ; i < len(ws); i++ {
		raw, w := ws[i].raw, ws[i].val
		if separators[raw] || raw == "|" || strings.HasSuffix(raw, ";") {
			return ""
		}
		if strings.ContainsAny(raw[:1], "<>") || i > 0 && strings.HasSuffix(ws[i-1].raw, ">") || strings.HasPrefix(w, "/dev/") {
			continue
		}
		if _, after, ok := strings.Cut(w, "://"); ok {
			w = strings.TrimRight(after, "/")
			if cut := strings.IndexAny(w, "?#"); cut >= 0 {
				w = strings.TrimRight(w[:cut], "/")
			}
			if !strings.Contains(w, "/") {
				return sanitize(w) // a host alone: its dots are not an extension
			}
		} else if !strings.Contains(w, "/") || strings.HasPrefix(w, "-") {
			continue
		}
		b := filepath.Base(strings.TrimRight(w, "/"))
		if t := sanitize(strings.TrimSuffix(b, filepath.Ext(b))); b != "/" && b != "." && t != "job" {
			return t
		}
	}
	return ""
}

var plainArg = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9:_.-]*$`)

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && name != "" && !strings.ContainsAny(name, "/-.")
}

func isNumber(w string) bool {
	_, err := strconv.Atoi(w)
	return err == nil
}

// namer hands out unique job names, stable for a given crontab: the same
// lines in the same order get the same names.
type namer struct{ taken map[string]bool }

func newNamer(taken []string) *namer {
	n := &namer{taken: make(map[string]bool)}
	for _, t := range taken {
		n.taken[t] = true
	}
	return n
}

// name returns base, else base_arg, else base_2, base_3 ..., made of
// [A-Za-z0-9_.-] only.
func (n *namer) name(base, arg string) string {
	base = sanitize(base)
	cands := []string{base}
	if arg != "" {
		cands = append(cands, base+"_"+sanitize(arg))
	}
	for _, c := range cands {
		if !n.taken[c] {
			n.taken[c] = true
			return c
		}
	}
	for i := 2; ; i++ {
		c := base + "_" + strconv.Itoa(i)
		if !n.taken[c] {
			n.taken[c] = true
			return c
		}
	}
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// sanitize makes s a valid job or lock name.
func sanitize(s string) string {
	s = strings.Trim(unsafe.ReplaceAllString(s, "_"), "_.-")
	if len(s) > 60 {
		s = strings.TrimRight(s[:60], "_.-")
	}
	if s == "" {
		return "job"
	}
	return s
}
