package config

import (
	"bytes"
	"fmt"
	"iter"
	"regexp"
	"slices"

	"gopkg.in/yaml.v3"
)

// Parsing a large jobs: list a batch of items at a time.
//
// yaml.v3 builds the node tree of a whole document before anything can
// look at it (an UnmarshalYAML on the jobs list would be handed its node
// only once the tree of every job exists), and that tree takes several
// times the memory of the jobs decoded from it: with a million jobs,
// gigabytes, most of the parse spent allocating and zeroing it. When the
// jobs: list is a plain block sequence, splitJobs cuts its items out of
// the text. The rest of the file, the skeleton, with the items' lines left
// empty so that every line keeps its number, is parsed as before; the
// items are parsed a batch at a time, each batch a document of its own
// that starts at the beginning of a line (so columns are the file's), its
// nodes moved to the lines they came from, decoded, and dropped.
//
// A cut can only change the meaning of the file where an item's first
// line is not really one: inside a quoted scalar or a flow collection
// (then a batch does not parse, or holds fewer items than dash lines), or
// where an alias refers across a cut (then one side names an unknown
// anchor, or the skeleton has aliases and a batch has anchors). Whenever
// any check fails, the whole document is parsed as before, by a fresh
// decoder, and the problems reported are that parse's: a file with a
// syntax error always takes the whole-document path.

// batchBytes is about how much of the jobs list one batch parses: enough
// that a batch's set-up is nothing beside its parse, small enough that
// its tree is garbage long before the next collection.
const batchBytes = 64 << 10

// jobsSplit is a file whose jobs: list was cut into its items.
type jobsSplit struct {
	data     []byte
	skeleton []byte // data with the list's lines emptied
	keyLine  int    // the line of `jobs:`
	items    []itemAt
	end      int // offset in data where the list ends
	batch    int // bytes a batch aims at: batchBytes, or less in tests

	skeletonAliases bool // the skeleton has an alias: no anchor may be cut off from it
	used, failed    bool // the decoder reached the jobs key; a check failed
}

// itemAt is where an item of the list starts: its offset and line.
type itemAt struct{ off, line int }

// jobsKey is a top-level `jobs:` line with the list below it.
var jobsKey = regexp.MustCompile(`^jobs:( *| +#.*)$`)

// splitJobs finds the jobs: list and where each item starts. ok is false
// when the file is not simple enough to cut: line breaks other than \n,
// directives, another encoding than UTF-8, no `jobs:` line followed by a
// block sequence.
func splitJobs(data []byte, batch int) (*jobsSplit, bool) {
	if batch <= 0 || !plainText(data) {
		return nil, false
	}
	s := &jobsSplit{data: data, batch: batch}
	off, line := 0, 1
	for ; off < len(data) && s.keyLine == 0; line++ {
		text, next := lineAt(data, off)
		if jobsKey.Match(text) {
			s.keyLine = line
		}
		off = next
	}
	if s.keyLine == 0 || !s.scanItems(off, line) {
		return nil, false
	}
	s.skeleton = emptyLines(data, off, s.end)
	return s, true
}

// scanItems records the items of the list whose lines start at off (line
// line): the lines at the first item's indentation that start with a
// dash, up to the first line that is neither blank, a comment, nor deeper.
func (s *jobsSplit) scanItems(off, line int) bool {
	indent := -1
	for s.end = len(s.data); off < len(s.data); line++ {
		text, next := lineAt(s.data, off)
		rest := bytes.TrimLeft(text, " ")
		in := len(text) - len(rest)
		switch {
		case len(rest) == 0 || rest[0] == '#':
		case isDash(rest) && (indent < 0 || in == indent):
			indent = in
			s.items = append(s.items, itemAt{off, line})
		case indent < 0:
			return false // jobs: is not followed by a block sequence
		case in <= indent:
			s.end = off
			return true
		}
		off = next
	}
	return len(s.items) > 0
}

// plainText reports whether data has only \n line breaks (YAML also
// breaks lines at \r, NEL, LS and PS, which the cut does not count), no
// NUL or byte-order mark of UTF-16 or 32, and no directive.
func plainText(data []byte) bool {
	if len(data) > 0 && (data[0] == '%' || data[0] == 0xfe || data[0] == 0xff) {
		return false
	}
	for _, b := range [][]byte{{'\r'}, {0}, []byte("\u0085"), []byte("\u2028"), []byte("\u2029"), []byte("\n%")} {
		if bytes.Contains(data, b) {
			return false
		}
	}
	return true
}

// lineAt returns the line starting at off without its \n, and the offset
// of the next line.
func lineAt(data []byte, off int) (text []byte, next int) {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return data[off : off+i], off + i + 1
	}
	return data[off:], len(data)
}

// isDash reports whether a line's text after its indentation starts a
// block sequence item.
func isDash(rest []byte) bool {
	return len(rest) == 1 && rest[0] == '-' || len(rest) > 1 && rest[0] == '-' && rest[1] == ' '
}

// emptyLines returns data with the bytes of each line in [from, to)
// removed, keeping the line breaks.
func emptyLines(data []byte, from, to int) []byte {
	n := bytes.Count(data[from:to], []byte("\n"))
	out := make([]byte, 0, from+n+len(data)-to)
	out = append(out, data[:from]...)
	out = append(out, bytes.Repeat([]byte("\n"), n)...)
	return append(out, data[to:]...)
}

// checkSkeleton notes whether the skeleton's tree has an alias, which an
// anchor in a batch must not be cut off from.
func (s *jobsSplit) checkSkeleton(root *yaml.Node) {
	walk(root, func(n *yaml.Node) {
		if n.Kind == yaml.AliasNode {
			s.skeletonAliases = true
		}
	})
}

// claim takes the jobs entry the decoder found in the skeleton: it must
// be the `jobs:` line that was cut, its value left empty by the cut.
func (s *jobsSplit) claim(e entry) bool {
	s.used = true
	v := e.val
	if e.key.Line != s.keyLine || e.key.Column != 1 || v.Kind != yaml.ScalarNode ||
		v.Tag != "!!null" || v.Value != "" || v.Anchor != "" || v.Style != 0 {
		s.failed = true
	}
	return !s.failed
}

// each yields the list's items, parsing them a batch at a time. It stops
// early, with failed set, when a batch does not check out.
func (s *jobsSplit) each() iter.Seq[*yaml.Node] {
	return func(yield func(*yaml.Node) bool) {
		for from := 0; from < len(s.items); {
			items, to, ok := s.parseBatch(from)
			if !ok {
				s.failed = true
				return
			}
			for _, it := range items {
				if !yield(it) {
					return
				}
			}
			from = to
		}
	}
}

// parseBatch parses the items from `from` up to about s.batch bytes as a
// document of their own, and moves its nodes to their lines in the file.
func (s *jobsSplit) parseBatch(from int) (items []*yaml.Node, to int, ok bool) {
	start := s.items[from].off
	to = from + 1
	for to < len(s.items) && s.items[to].off-start < s.batch {
		to++
	}
	end := s.end
	if to < len(s.items) {
		end = s.items[to].off
	}
	var doc yaml.Node
	if err := safeUnmarshal(s.data[start:end], &doc); err != nil || len(doc.Content) != 1 {
		return nil, 0, false
	}
	seq := doc.Content[0]
	if seq.Kind != yaml.SequenceNode || seq.Style != 0 || seq.Tag != "!!seq" || seq.Anchor != "" ||
		len(seq.Content) != to-from {
		return nil, 0, false
	}
	shift, anchored := s.items[from].line-1, false
	walk(seq, func(n *yaml.Node) {
		n.Line += shift
		anchored = anchored || n.Anchor != ""
	})
	if anchored && s.skeletonAliases {
		return nil, 0, false
	}
	return seq.Content, to, true
}

// walk calls f on n and every node under it. Aliases are not followed:
// the node they name is in the tree already.
func walk(n *yaml.Node, f func(*yaml.Node)) {
	f(n)
	for _, c := range n.Content {
		walk(c, f)
	}
}

// safeUnmarshal parses the first document of data into n, a panic of
// the YAML library turned into an error as in safeDecode.
func safeUnmarshal(data []byte, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: the parser failed: %v", r)
		}
	}()
	return yaml.Unmarshal(data, n)
}

// parse decodes data with a decoder from mk: cut at its jobs list with
// batches of about batch bytes when the file allows (batch 0: never), and
// else, or when a check of the cut fails, whole, by a fresh decoder.
func parse(data []byte, batch int, mk func() *decoder) (*decoder, *Config) {
	if s, ok := splitJobs(data, batch); ok {
		d := mk()
		d.split = s
		if root, err := d.parseDocument(s.skeleton); err == nil && root != nil {
			s.checkSkeleton(root)
			cfg := d.config(root)
			if s.used && !s.failed {
				return d, cfg
			}
		}
	}
	d := mk()
	var cfg *Config
	if root, ok := d.document(data); ok {
		cfg = d.config(root)
	}
	return d, cfg
}

// jobItems returns how many items the jobs list has and the items, from
// the cut list when there is one; nil items when there are none to
// decode, a problem reported where the list is empty or no list.
func (d *decoder) jobItems(e entry) (int, iter.Seq[*yaml.Node]) {
	if d.split != nil {
		if !d.split.claim(e) || d.settingsOnly {
			return 0, nil
		}
		return len(d.split.items), d.split.each()
	}
	n := resolve(e.val)
	switch {
	case isNull(n) || (n.Kind == yaml.SequenceNode && len(n.Content) == 0):
		d.warnf(e.key, "jobs is empty: no jobs will run")
		return 0, nil
	case n.Kind != yaml.SequenceNode:
		d.errorf(e.val, "jobs: expected a list of jobs (- name: ...), found %s", describe(e.val))
		return 0, nil
	}
	return len(n.Content), slices.Values(n.Content)
}
