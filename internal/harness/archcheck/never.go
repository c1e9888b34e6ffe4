package archcheck

import (
	"fmt"
	"strings"
)

// neverRules reports, for each package of a rule's "from" part, the
// nearest package of its "never" part that it depends on, with the chain
// of imports that leads there (as `go list -deps` would show it).
func (c *checker) neverRules() {
	known := map[string]bool{}
	for _, p := range c.plan.Parts {
		known[p.Name] = true
	}
	for _, r := range c.plan.Never {
		if !known[r.From] || !known[r.To] {
			c.fail("%s: never rule %s → %s names a part that is not on the map", PlanFile, r.From, r.To)
			continue
		}
		for _, f := range c.g.Folders() {
			if p, ok := c.placeOf(f); ok && p.part == r.From {
				c.neverFrom(f, r)
			}
		}
	}
}

func (c *checker) neverFrom(start string, r Never) {
	chain, pos := c.reach(start, func(f string) bool {
		p, ok := c.placeOf(f)
		return ok && p.part == r.To
	})
	if chain == nil {
		return
	}
	via := ""
	if len(chain) > 2 {
		via = fmt.Sprintf(", which leads to %s (%s)", chain[len(chain)-1], strings.Join(chain, " → "))
	}
	c.fail("%s: %s imports %s%s: breaks the never rule %s → %s (%s)",
		pos, start, chain[1], via, r.From, r.To, r.Why)
}

// reach walks the imports breadth first from start and returns the
// shortest chain of folders to one that hit accepts, with the position of
// the chain's first import; nil when none is reached.
func (c *checker) reach(start string, hit func(string) bool) ([]string, string) {
	type step struct {
		prev, pos string
	}
	seen := map[string]step{start: {}}
	queue := []string{start}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, imp := range c.g.Packages[cur] {
			if _, ok := seen[imp.Folder]; ok {
				continue
			}
			seen[imp.Folder] = step{prev: cur, pos: imp.Pos}
			if hit(imp.Folder) {
				return backtrack(imp.Folder, start, func(f string) (string, string) { return seen[f].prev, seen[f].pos })
			}
			queue = append(queue, imp.Folder)
		}
	}
	return nil, ""
}

func backtrack(end, start string, prev func(string) (string, string)) ([]string, string) {
	chain := []string{end}
	pos := ""
	for cur := end; cur != start; {
		p, at := prev(cur)
		chain, pos, cur = append([]string{p}, chain...), at, p
	}
	return chain, pos
}
