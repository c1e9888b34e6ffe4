package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"cronvisor/internal/base/run"
)

// Defaults applied where jobs.yaml is silent.
const (
	DefaultStateDir      = ".cronvisor"
	DefaultShutdownGrace = 30 * time.Second
	DefaultKillGrace     = 10 * time.Second
	DefaultShell         = "/bin/sh"
	DefaultLockTTL       = 30 * time.Second
	DefaultKeepRuns      = 1000
	DefaultKeepAge       = 30 * 24 * time.Hour
	DefaultLogLimit      = 1 << 20
)

// Load reads the file at path and parses it; see Parse.
func Load(path string) (*Config, []Problem) {
	data, problems, ok := read(path)
	if !ok {
		return nil, problems
	}
	cfg, problems := Parse(path, data)
	if cfg != nil {
		cfg.Text = data
	}
	return cfg, problems
}

// read reads the file at path; when it cannot, the problem says why.
func read(path string) ([]byte, []Problem, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		// The path is printed once, in front; the PathError would repeat it.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, []Problem{{Path: path, Message: "cannot read: " + err.Error()}}, false
	}
	return data, nil, true
}

// Parse checks data, the contents of the file at path, and reports every
// problem it finds in one pass, sorted by position. path is used in messages
// and to resolve state_dir and relative job dirs. The Config is nil when any
// problem is an error; warnings may come with a valid Config. Parse does not
// lint the schedules; see Lint. The file is judged for this process as its
// supervisor: a job's user: other than its own is an error unless it runs
// as root.
func Parse(path string, data []byte) (*Config, []Problem) {
	return ParseAs(path, data, os.Geteuid(), os.Getegid())
}

// ParseAs is Parse for a supervisor with effective ids euid and egid: for
// checking a file meant for another user (ParseAs(path, data, 0, 0): for
// root) without being that user.
func ParseAs(path string, data []byte, euid, egid int) (*Config, []Problem) {
	d, cfg := parse(data, batchBytes, func() *decoder { return newDecoder(path, euid, egid) })
	ps := tidy(d.problems)
	if HasErrors(ps) {
		return nil, ps
	}
	return cfg, ps
}

// document parses the YAML into a node tree. ok is false on a syntax error;
// a file with no document at all yields a nil root and ok.
func (d *decoder) document(data []byte) (root *yaml.Node, ok bool) {
	root, err := d.parseDocument(data)
	if err != nil {
		d.syntax(data, err)
		return nil, false
	}
	return root, true
}

// parseDocument is document with a syntax error returned, not reported.
func (d *decoder) parseDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := safeDecode(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var extra yaml.Node
	switch err := safeDecode(dec, &extra); {
	case err == nil:
		if len(extra.Content) > 0 && !isNull(extra.Content[0]) {
			d.errorf(extra.Content[0], "a second YAML document; jobs.yaml holds one (remove the ---)")
		}
	case !errors.Is(err, io.EOF):
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// safeDecode turns a panic inside the YAML library into an error: a daemon
// reloading on SIGHUP must keep its old jobs rather than crash on a file
// that trips a parser bug.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: the parser failed: %v", r)
		}
	}()
	return dec.Decode(n)
}

var yamlPrefix = regexp.MustCompile(`^yaml: (?:line (\d+): )?`)

// syntax reports a YAML syntax error. yaml.v3 gives only a line, and often
// the line where the enclosing construct began rather than the offending
// one; firstFailingLine narrows it down.
func (d *decoder) syntax(data []byte, err error) {
	msg := err.Error()
	line := 0
	if m := yamlPrefix.FindStringSubmatch(msg); m != nil {
		msg = msg[len(m[0]):]
		line, _ = strconv.Atoi(m[1])
	}
	if l := firstFailingLine(data, msg, line); l > 0 {
		line = l
	}
	line = max(line, 1)
	col, tab := syntaxColumn(data, line, msg)
	switch {
	case tab:
		msg += " (YAML indents with spaces, not tabs)"
	case indentMessages.MatchString(msg):
		msg += indentHint(data, line, col)
	}
	d.problems = append(d.problems, Problem{
		Path: d.path, Line: line, Col: col, Message: "invalid YAML: " + msg,
	})
}

// maxProbeLines and maxProbeBytes bound the quadratic search in
// firstFailingLine; past them the line yaml.v3 named is good enough.
const (
	maxProbeLines = 400
	maxProbeBytes = 8 << 20
)

// firstFailingLine returns the first line L (from just before the line yaml
// named) such that the file cut after L fails with the same message, which
// is where the mistake is in all but contrived files; 0 if none does.
func firstFailingLine(data []byte, msg string, hint int) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	start := max(hint-1, 1)
	spent := 0
	for l := start; l <= len(lines) && l < start+maxProbeLines && spent < maxProbeBytes; l++ {
		prefix := bytes.Join(lines[:l], nil)
		spent += len(prefix)
		err := decodeAll(prefix)
		if err == nil {
			continue
		}
		if yamlPrefix.ReplaceAllString(err.Error(), "") == msg {
			return l
		}
	}
	return 0
}

// decodeAll parses every document in data and returns the first error.
func decodeAll(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := safeDecode(dec, &n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

var anchorName = regexp.MustCompile(`unknown anchor '(.*)' referenced`)

// syntaxColumn guesses the column of a syntax error on line: a tab in the
// indentation (tab is true then), the alias or colon the message is about,
// else the first non-blank character, where the misplaced token usually
// starts.
func syntaxColumn(data []byte, line int, msg string) (col int, tab bool) {
	lines := strings.Split(string(data), "\n")
	if line > len(lines) {
		return 1, false
	}
	text := lines[line-1]
	indent := len(text) - len(strings.TrimLeft(text, " \t"))
	if i := strings.IndexByte(text[:indent], '\t'); i >= 0 {
		return i + 1, true
	}
	if m := anchorName.FindStringSubmatch(msg); m != nil {
		if i := strings.Index(text, "*"+m[1]); i >= 0 {
			return i + 1, false
		}
	}
	if strings.HasPrefix(msg, "mapping values are not allowed") {
		// `a: b: c`: the second colon is the one YAML cannot take.
		if m := secondColon.FindStringSubmatchIndex(text); m != nil {
			return m[2], false // the colon is just before the group
		}
	}
	return indent + 1, false
}

var secondColon = regexp.MustCompile(`^[^:]*:\s[^:]*:(\s|$)`)

// config decodes the top-level mapping.
func (d *decoder) config(root *yaml.Node) *Config {
	cfg := &Config{
		Path:          d.path,
		StateDir:      filepath.Join(d.dir, DefaultStateDir),
		ShutdownGrace: DefaultShutdownGrace,
		LockBackend:   LockBackend{Type: BackendFile, TTL: DefaultLockTTL},
		History:       HistoryPolicy{KeepRuns: DefaultKeepRuns, KeepAge: DefaultKeepAge, LogLimit: DefaultLogLimit},
		Durability:    run.DurabilityMachine,
	}
	if root == nil || isNull(resolve(root)) {
		d.problems = append(d.problems, Problem{Path: d.path, Line: 1, Col: 1, Warning: true,
			Message: "the file is empty: no jobs will run"})
		return cfg
	}
	root = resolve(root)
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "the top level must be a mapping with keys like defaults and jobs, found %s", describe(root))
		return nil
	}
	top := make([]entry, len(topKeys))
	d.keyed(root, "", topKeys, topHint, top)
	for i, k := range topTable {
		if k.decode != nil {
			k.decode(d, cfg, top[i])
		}
	}
	var defs *jobFields
	if e, ok := lookup(topKeys, top, "defaults"); ok {
		defs = d.defaults(e.val)
	}
	if e, ok := lookup(topKeys, top, "jobs"); ok {
		cfg.Jobs, cfg.Source.Jobs = d.jobs(e, defs)
		if !d.settingsOnly {
			d.unusedResources(cfg.Jobs)
		}
	} else {
		d.warnf(root, "no jobs key: no jobs will run")
	}
	return cfg
}

// topHint lets x- keys through, as Compose does, so a file can hold anchors
// to merge into jobs; and it redirects job keys written at the top level.
func topHint(key string) (msg string, handled bool) {
	if strings.HasPrefix(key, "x-") {
		return "", true
	}
	if isJobKey(key) {
		return fmt.Sprintf("%q is a job key; put it under defaults: or under a job", key), true
	}
	return "", false
}

// dirAbs is abs once per dir written: jobs naming the same dir share the
// result.
func (d *decoder) dirAbs(p string) string {
	if a, ok := d.dirs[p]; ok {
		return a
	}
	a := d.abs(p)
	d.dirs[p] = a
	return a
}

// abs resolves a path written in the file against the file's directory.
func (d *decoder) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(d.dir, p)
}
