package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"cronvisor/internal/base/calendar"

	"gopkg.in/yaml.v3"
)

// decoder walks the node tree and collects problems instead of stopping at
// the first, so one run of validate shows everything to fix.
//
// The maps after budget remember what jobs repeat: with thousands of jobs
// most share a schedule, a zone, a dir, a command or the env of defaults,
// and each is parsed once and shared rather than held once per job.
type decoder struct {
	path     string
	dir      string // absolute directory of the file
	problems []Problem
	budget   int // entries left to expand through merge keys
	argSpace int // bytes execve accepts for arguments and environment
	environ  int // of them, what the supervisor's environment takes

	// calendarsByName are the calendars declared at the top level, for
	// the jobs' skip_on and only_on.
	calendarsByName map[string]*calendar.Calendar

	scheds        map[schedKey]parsedSchedule
	zones         map[string]zone
	dirs          map[string]string // dir as written: resolved by abs
	interned      map[string]string // see intern
	argvs         map[string][]string
	envs          map[envKey]parsedEnv
	varsByContent map[string]map[string]string
	lookups       map[string]lookedUp     // user: and group: values, see runAs
	accounts      map[string]*Account     // shared by the jobs that run as one account
	targetLists   map[*yaml.Node][]Target // notify lists by node: defaults' is every job's
	euid, egid    int                     // the supervisor's: who may run jobs as whom
	reading       bool                    // for a command that only looks: see ParseForReading
	unsetEnv      []string                // reading: variables lock_backend needs that are not set
	self          *ownLimits              // the supervisor's nice, oom_score_adj, rlimits: see own
	split         *jobsSplit              // the jobs list cut from the text, see split.go
	settingsOnly  bool                    // a cut jobs list is not decoded: see LoadSettingsForReading
	resources     map[string]int          // resources:, which uses checks against
	resourceKeys  map[string]*yaml.Node   // where each resource was declared
	work          Job                     // the job fill decodes into
	baseEnv       *yaml.Node              // while fill decodes a job: the env its env extends
	args          []string                // scratch of command and sameVars
	key           []byte                  // scratch of argv and sameVars
}

// mergeBudget bounds the work merge keys can cause: nested merges of merges
// grow exponentially, and a config file should not be able to hang a reload.
const mergeBudget = 100000

func newDecoder(path string, euid, egid int) *decoder {
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &decoder{
		path: path, dir: dir, budget: mergeBudget,
		argSpace: argSpace(), environ: environSize(),
		scheds:        make(map[schedKey]parsedSchedule),
		zones:         make(map[string]zone),
		dirs:          make(map[string]string),
		interned:      make(map[string]string),
		argvs:         make(map[string][]string),
		targetLists:   make(map[*yaml.Node][]Target),
		envs:          make(map[envKey]parsedEnv),
		varsByContent: make(map[string]map[string]string),
		lookups:       make(map[string]lookedUp),
		accounts:      make(map[string]*Account),
		euid:          euid, egid: egid,
	}
}

// intern returns the first string equal to s that it was given, so that
// jobs writing the same value share one copy.
func (d *decoder) intern(s string) string {
	if t, ok := d.interned[s]; ok {
		return t
	}
	d.interned[s] = s
	return s
}

func (d *decoder) report(p Pos, warning bool, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = clip(s, 100)
		}
	}
	d.problems = append(d.problems, Problem{
		Path: d.path, Line: p.Line, Col: p.Col, Warning: warning,
		Message: fmt.Sprintf(format, args...),
	})
}

// clip shortens a value quoted in a message: a whole script pasted under
// the wrong key should not fill the terminal.
func clip(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit]) + "..."
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.report(pos(n), false, format, args...)
}

func (d *decoder) warnf(n *yaml.Node, format string, args ...any) {
	d.report(pos(n), true, format, args...)
}

func pos(n *yaml.Node) Pos { return Pos{n.Line, n.Column} }

// resolve follows aliases to the anchored node. The hop limit is a guard:
// yaml.v3 does not chain aliases, but the tree is not ours.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; i < 8 && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what a node is, for "expected X, found Y" messages.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "no value"
	case n.Kind == yaml.ScalarNode:
		return strconv.Quote(clip(n.Value, 60))
	}
	return "an unresolvable alias"
}

// entry is one key and its value in a mapping.
type entry struct {
	name     string
	key, val *yaml.Node
}

// entries lists a mapping's pairs with YAML merge keys (<<) expanded. As
// YAML specifies, keys written in the mapping win over merged ones, and an
// earlier merge source wins over a later one. Duplicate written keys and
// keys that are not plain scalars are reported.
func (d *decoder) entries(n *yaml.Node, depth int) []entry {
	var merged []entry
	own := keySet{list: make([]entry, 0, len(n.Content)/2)}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if depth > 0 && !d.spend(k) {
			return own.list
		}
		rk := resolve(k)
		switch {
		case rk.Kind == yaml.ScalarNode && rk.ShortTag() == "!!merge":
			merged = append(merged, d.merge(v, depth)...)
		case rk.Kind != yaml.ScalarNode || isNull(rk):
			d.errorf(k, "a key must be a plain word, found %s", describe(k))
		case own.find(rk.Value) != nil:
			d.errorf(k, "duplicate key %q (first at line %d)", rk.Value, own.find(rk.Value).Line)
		default:
			own.add(entry{rk.Value, k, v})
		}
	}
	for _, e := range merged {
		if own.find(e.name) == nil {
			own.add(e)
		}
	}
	return own.list
}

// smallMapping is how many keys keySet scans before it builds an index.
const smallMapping = 16

// keySet is a mapping's entries with the key node of each name. Most
// mappings hold a handful of keys, which a scan finds sooner than a map is
// built; past smallMapping a map takes over so that merging a large anchor
// stays linear.
type keySet struct {
	list  []entry
	index map[string]*yaml.Node
}

func (s *keySet) find(name string) *yaml.Node {
	if s.index != nil {
		return s.index[name]
	}
	for _, e := range s.list {
		if e.name == name {
			return e.key
		}
	}
	return nil
}

func (s *keySet) add(e entry) {
	s.list = append(s.list, e)
	switch {
	case s.index != nil:
		s.index[e.name] = e.key
	case len(s.list) > smallMapping:
		s.index = make(map[string]*yaml.Node, 2*len(s.list))
		for _, e := range s.list {
			s.index[e.name] = e.key
		}
	}
}

// spend counts one merged key against the budget, reporting when it runs out.
func (d *decoder) spend(at *yaml.Node) bool {
	d.budget--
	if d.budget == -1 {
		d.errorf(at, "too many keys through merges (<<); simplify the anchors")
	}
	return d.budget >= 0
}

// merge expands the value of a << key: a mapping or a list of mappings.
func (d *decoder) merge(v *yaml.Node, depth int) []entry {
	if depth >= 8 {
		d.errorf(v, "merges (<<) nested too deeply")
		return nil
	}
	rv := resolve(v)
	switch rv.Kind {
	case yaml.MappingNode:
		return d.entries(rv, depth+1)
	case yaml.SequenceNode:
		var out []entry
		for _, item := range rv.Content {
			ri := resolve(item)
			if ri.Kind != yaml.MappingNode {
				d.errorf(item, "a merge (<<) takes mappings, found %s", describe(item))
				continue
			}
			out = append(out, d.entries(ri, depth+1)...)
		}
		return out
	}
	d.errorf(v, "a merge (<<) takes a mapping or a list of mappings, found %s", describe(v))
	return nil
}

// keyHint lets a caller explain or allow a key outside the known set.
// handled with an empty msg accepts the key silently.
type keyHint func(key string) (msg string, handled bool)

// keyed checks that n is a mapping (no value counts as an empty one) with
// keys from known, and stores the entry of known[i] in out[i] (out has the
// length of known; a key not written leaves a zero entry, see has). what
// prefixes messages about n itself.
func (d *decoder) keyed(n *yaml.Node, what string, known []string, hint keyHint, out []entry) {
	rn := resolve(n)
	if isNull(rn) {
		return
	}
	if rn.Kind != yaml.MappingNode {
		d.errorf(n, "%s: expected a mapping, found %s", what, describe(n))
		return
	}
	for _, e := range d.entries(rn, 0) {
		if i := slices.Index(known, e.name); i >= 0 {
			out[i] = e
			continue
		}
		if hint != nil {
			if msg, handled := hint(e.name); handled {
				if msg != "" {
					d.errorf(e.key, "%s", msg)
				}
				continue
			}
		}
		d.errorf(e.key, "unknown key %q%s", e.name, suggest(e.name, known))
	}
}

// has reports whether e holds a key written in the mapping.
func (e entry) has() bool { return e.key != nil }

// lookup returns the entry of key k from out of keyed(..., known, ..., out).
func lookup(known []string, out []entry, k string) (entry, bool) {
	e := out[slices.Index(known, k)]
	return e, e.has()
}

// text decodes a scalar as its literal text; numbers and booleans are
// taken as written, since a name or a path may well look like one.
func (d *decoder) text(key string, n *yaml.Node) (string, bool) {
	rn := resolve(n)
	if rn.Kind != yaml.ScalarNode || isNull(rn) {
		d.errorf(n, "%s: expected a string, found %s", key, describe(n))
		return "", false
	}
	if rn.Value == "" {
		d.errorf(n, "%s is empty", key)
		return "", false
	}
	if hasNUL(rn.Value) {
		d.errorf(n, "%s: contains a NUL byte (\\0), which no file name, argument or environment variable can hold", key)
		return "", false
	}
	return rn.Value, true
}

// boolean decodes true or false. YAML 1.1's yes/no/on/off are refused with
// a hint, as yaml.v3 reads them as strings.
func (d *decoder) boolean(key string, n *yaml.Node) (bool, bool) {
	rn := resolve(n)
	if rn.Kind == yaml.ScalarNode && rn.ShortTag() == "!!bool" {
		if v, err := strconv.ParseBool(strings.ToLower(rn.Value)); err == nil {
			return v, true
		}
	}
	d.errorf(n, "%s: expected true or false, found %s", key, describe(n))
	return false, false
}

// positiveInt decodes an integer greater than zero.
func (d *decoder) positiveInt(key string, n *yaml.Node) (int, bool) {
	rn := resolve(n)
	v, err := strconv.Atoi(rn.Value)
	if rn.Kind != yaml.ScalarNode || rn.ShortTag() != "!!int" || err != nil {
		d.errorf(n, "%s: expected a whole number, found %s", key, describe(n))
		return 0, false
	}
	if v <= 0 {
		d.errorf(n, "%s: must be greater than 0", key)
		return 0, false
	}
	return v, true
}

var sizePattern = regexp.MustCompile(`^([0-9]+)\s*([KMG]i?B|B)?$`)

var sizeUnits = map[string]int64{
	"": 1, "B": 1,
	"KB": 1e3, "MB": 1e6, "GB": 1e9,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
}

// size decodes a byte count: a plain number or one with a unit such as
// 512KiB or 1MiB (binary) or 10MB (decimal).
func (d *decoder) size(key string, n *yaml.Node) (int64, bool) {
	rn := resolve(n)
	var m []string
	if rn.Kind == yaml.ScalarNode && !isNull(rn) {
		m = sizePattern.FindStringSubmatch(strings.TrimSpace(rn.Value))
	}
	if m == nil {
		d.errorf(n, "%s: expected a size like 1MiB, 512KiB or a number of bytes, found %s", key, describe(n))
		return 0, false
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	unit := sizeUnits[m[2]]
	if err != nil || v > (1<<62)/unit {
		d.errorf(n, "%s: %s is too large", key, rn.Value)
		return 0, false
	}
	if v == 0 {
		d.errorf(n, "%s: must be greater than 0", key)
		return 0, false
	}
	return v * unit, true
}
