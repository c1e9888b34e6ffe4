package archcheck

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Plan is what docs/architecture.md says about the packages: the parts of
// the map from the top floor down, the harnesses beside it, and the
// imports that must never exist.
type Plan struct {
	Parts  []Part  // the package map, top floor first
	Beside []Part  // harnesses: outside the map, imported by no part
	Never  []Never // the "never" table
	// May is the "may import" table: each part's name to the parts
	// its packages may import besides their own.
	May map[string][]string
}

// Part is one row of a table: a name and the folders it covers. A folder
// covers its sub-folders too, unless one of them is listed on its own.
type Part struct {
	Name    string
	Folders []string
}

// Never is one row of the "never" table: no package of part From may
// depend, directly or through others, on a package of part To.
type Never struct {
	From, To, Why string
}

// The tables are found by their header, not by their place in the
// document, so that prose and headings can move freely around them.
var (
	mapHeader    = []string{"part", "folders"}
	besideHeader = []string{"harness", "folders"}
	neverHeader  = []string{"from", "never", "why"}
	mayHeader    = []string{"part", "may import"}
)

var codeSpan = regexp.MustCompile("`([^`]+)`")

// ReadPlan reads the plan from the markdown file at path.
func ReadPlan(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tables := markdownTables(string(b))
	p := &Plan{}
	for _, want := range []struct {
		header []string
		into   func([][]string) error
	}{
		{mapHeader, func(rows [][]string) (err error) { p.Parts, err = parts(rows); return err }},
		{besideHeader, func(rows [][]string) (err error) { p.Beside, err = parts(rows); return err }},
		{neverHeader, func(rows [][]string) (err error) { p.Never, err = nevers(rows); return err }},
		{mayHeader, func(rows [][]string) (err error) { p.May, err = mays(rows); return err }},
	} {
		rows, err := tableWithHeader(tables, want.header)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err := want.into(rows); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return p, nil
}

// markdownTables returns every table of the document as rows of cells,
// the header first, without the |---| line under it.
func markdownTables(doc string) [][][]string {
	var tables [][][]string
	var cur [][]string
	for _, line := range strings.Split(doc, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if cur != nil {
				tables = append(tables, cur)
				cur = nil
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cur) == 1 && strings.Trim(strings.Join(cells, ""), "-: ") == "" {
			continue
		}
		cur = append(cur, cells)
	}
	if cur != nil {
		tables = append(tables, cur)
	}
	return tables
}

// tableWithHeader returns the rows, header left out, of the one table
// whose header starts with the given column names.
func tableWithHeader(tables [][][]string, header []string) ([][]string, error) {
	var found [][]string
	n := 0
	for _, t := range tables {
		if len(t[0]) < len(header) || !strings.EqualFold(strings.Join(t[0][:len(header)], "|"), strings.Join(header, "|")) {
			continue
		}
		found, n = t[1:], n+1
	}
	if n != 1 {
		return nil, fmt.Errorf("want one table whose header starts %q, found %d", strings.Join(header, " | "), n)
	}
	return found, nil
}

// parts reads rows of "name | folders | ...", the folders as code spans.
func parts(rows [][]string) ([]Part, error) {
	var ps []Part
	for _, r := range rows {
		p := Part{Name: r[0]}
		for _, m := range codeSpan.FindAllStringSubmatch(r[1], -1) {
			p.Folders = append(p.Folders, m[1])
		}
		if p.Name == "" || len(p.Folders) == 0 {
			return nil, fmt.Errorf("row %q names no part or no folder (folders are written as `code`)", strings.Join(r, " | "))
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// nevers reads rows of "from | never | why", each a part's name.
func nevers(rows [][]string) ([]Never, error) {
	var ns []Never
	for _, r := range rows {
		if len(r) < 3 || r[0] == "" || r[1] == "" {
			return nil, fmt.Errorf("never row %q wants a from, a never and a why", strings.Join(r, " | "))
		}
		ns = append(ns, Never{From: r[0], To: r[1], Why: r[2]})
	}
	return ns, nil
}

// mays reads rows of "part | may import | ...", the second cell a list
// of parts' names separated by commas (empty for none).
func mays(rows [][]string) (map[string][]string, error) {
	may := map[string][]string{}
	for _, r := range rows {
		if len(r) < 2 || r[0] == "" {
			return nil, fmt.Errorf("may-import row %q wants a part and a list", strings.Join(r, " | "))
		}
		if _, dup := may[r[0]]; dup {
			return nil, fmt.Errorf("may-import table has two rows for %s", r[0])
		}
		list := []string{}
		for _, name := range strings.Split(r[1], ",") {
			if name = strings.TrimSpace(name); name != "" {
				list = append(list, name)
			}
		}
		may[r[0]] = list
	}
	return may, nil
}
