package archcheck

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// PlanFile is where the plan is written, relative to the module's root.
const PlanFile = "docs/architecture.md"

// place is where a folder stands: its part and its floor, counted from
// the top (0 is the top), or beside the map for a harness.
type place struct {
	part   string
	floor  int
	beside bool
}

// Check holds the module at root to the plan in its PlanFile and returns
// every way they disagree, one line each. An error means that either
// could not be read.
//
// The rules: every package stands on the map (a folder listed covers its
// sub-folders unless they are listed themselves); every listed folder
// holds a package; an import points to its own part (Go's ban on cycles
// orders the packages of one part) or to a part on a lower floor that
// its row of the may-import table lists, never to a harness; and no package of a never rule's "from" part depends,
// directly or through others, on its "never" part.
func Check(root string) ([]string, error) {
	plan, err := ReadPlan(filepath.Join(root, filepath.FromSlash(PlanFile)))
	if err != nil {
		return nil, err
	}
	g, err := ReadGraph(root)
	if err != nil {
		return nil, err
	}
	places, problems := placesOf(plan)
	c := &checker{plan: plan, g: g, places: places, problems: problems}
	c.readMay()
	c.everyPackageOnTheMap()
	c.importsPointDown()
	c.neverRules()
	return c.problems, nil
}

func placesOf(plan *Plan) (map[string]place, []string) {
	places := map[string]place{}
	var problems []string
	add := func(p Part, at place) {
		for _, f := range p.Folders {
			if prev, ok := places[f]; ok {
				problems = append(problems, fmt.Sprintf("%s lists folder %s in %s and in %s", PlanFile, f, prev.part, p.Name))
			}
			places[f] = at
		}
	}
	for i, p := range plan.Parts {
		add(p, place{part: p.Name, floor: i})
	}
	for _, p := range plan.Beside {
		add(p, place{part: p.Name, beside: true})
	}
	return places, problems
}

type checker struct {
	plan     *Plan
	g        *Graph
	places   map[string]place
	may      map[string]map[string]bool // part to the parts it may import
	problems []string
}

func (c *checker) fail(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// placeOf finds a package's place by its folder or the nearest listed
// folder above it; the root folder covers only itself.
func (c *checker) placeOf(folder string) (place, bool) {
	for cur := folder; ; cur = path.Dir(cur) {
		if p, ok := c.places[cur]; ok && (cur != "." || folder == ".") {
			return p, true
		}
		if cur == "." || cur == "/" {
			return place{}, false
		}
	}
}

func (c *checker) everyPackageOnTheMap() {
	folders := c.g.Folders()
	for _, f := range folders {
		if _, ok := c.placeOf(f); !ok {
			c.fail("package %s (folder %s) is not on %s's package map: add its folder to a part's row, or to the harnesses beside the map",
				path.Join(c.g.Module, f), f, PlanFile)
		}
	}
	for listed, p := range c.places {
		if !holdsPackage(folders, listed) {
			c.fail("%s lists folder %s (part %s), which holds no package", PlanFile, listed, p.part)
		}
	}
}

func holdsPackage(folders []string, listed string) bool {
	for _, f := range folders {
		if f == listed || (listed != "." && strings.HasPrefix(f, listed+"/")) {
			return true
		}
	}
	return false
}

func (c *checker) importsPointDown() {
	for _, f := range c.g.Folders() {
		from, ok := c.placeOf(f)
		if !ok || from.beside {
			continue
		}
		for _, imp := range c.g.Packages[f] {
			to, ok := c.placeOf(imp.Folder)
			switch {
			case !ok:
				// Its own problem: the package is not on the map.
			case to.beside:
				c.fail("%s: %s imports %s, a harness (%s) beside the map, which no part may import",
					imp.Pos, f, imp.Folder, to.part)
			case to.floor < from.floor:
				c.fail("%s: %s imports %s, which points up the map: part %s stands above part %s",
					imp.Pos, f, imp.Folder, to.part, from.part)
			case to.part != from.part && !c.may[from.part][to.part]:
				c.fail("%s: %s imports %s: part %s may not import part %s (its row of the may-import table does not list it)",
					imp.Pos, f, imp.Folder, from.part, to.part)
			}
		}
	}
}
