package archcheck

import (
	"strings"
	"testing"
)

// TestTheMayImportTableIsChecked holds the table itself to the map: each
// broken row is reported, naming the part and the rule.
func TestTheMayImportTableIsChecked(t *testing.T) {
	parts := []Part{{Name: "Top", Folders: []string{"top"}}, {Name: "Mid", Folders: []string{"mid"}}, {Name: "Leaf", Folders: []string{"leaf"}}}
	tests := []struct {
		name string
		may  map[string][]string
		want string // "" for no problem
	}{
		{"each part lists parts below it", map[string][]string{"Top": {"Mid", "Leaf"}, "Mid": {"Leaf"}, "Leaf": {}}, ""},
		{"a part without a row", map[string][]string{"Top": {"Mid"}, "Leaf": {}}, "part Mid has no row"},
		{"a row that names no part", map[string][]string{"Top": {"Middle"}, "Mid": {}, "Leaf": {}}, "row of Top names Middle, which is not a part"},
		{"a row for no part", map[string][]string{"Top": {}, "Mid": {}, "Leaf": {}, "Bottom": {}}, "a row for Bottom, which is not a part"},
		{"a row that points up", map[string][]string{"Top": {}, "Mid": {"Top"}, "Leaf": {}}, "row of Mid names Top, which does not stand below it"},
		{"a row that names its own part", map[string][]string{"Top": {}, "Mid": {"Mid"}, "Leaf": {}}, "row of Mid names Mid, which does not stand below it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &checker{plan: &Plan{Parts: parts, May: tc.may}}
			c.readMay()
			got := strings.Join(c.problems, "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("want the problems to name %q, got %q", tc.want, got)
			}
		})
	}
}
