package archcheck

import "sort"

// readMay turns the may-import table into sets, and reports a part
// without a row, a name that is no part, and a listed part that stands
// on the same floor or above (which the floors would refuse anyway).
func (c *checker) readMay() {
	floor := map[string]int{}
	for i, p := range c.plan.Parts {
		floor[p.Name] = i
	}
	c.may = map[string]map[string]bool{}
	for _, p := range c.plan.Parts {
		list, ok := c.plan.May[p.Name]
		if !ok {
			c.fail("%s: part %s has no row in the may-import table", PlanFile, p.Name)
			continue
		}
		c.may[p.Name] = map[string]bool{}
		for _, to := range list {
			f, ok := floor[to]
			switch {
			case !ok:
				c.fail("%s: the may-import row of %s names %s, which is not a part of the map", PlanFile, p.Name, to)
			case f <= floor[p.Name]:
				c.fail("%s: the may-import row of %s names %s, which does not stand below it", PlanFile, p.Name, to)
			}
			c.may[p.Name][to] = true
		}
	}
	var rows []string
	for from := range c.plan.May {
		if _, ok := floor[from]; !ok {
			rows = append(rows, from)
		}
	}
	sort.Strings(rows)
	for _, from := range rows {
		c.fail("%s: the may-import table has a row for %s, which is not a part of the map", PlanFile, from)
	}
}
