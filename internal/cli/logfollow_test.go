package cli

import (
	"slices"
	"testing"
)

func TestDropOverlap(t *testing.T) {
	tests := []struct {
		name              string
		saved, live, want []string
	}{
		{"no saved log", nil, []string{"a"}, []string{"a"}},
		{"nothing live", []string{"a"}, nil, nil},
		{"disjoint", []string{"a", "b"}, []string{"c"}, []string{"c"}},
		{"the saved end repeats", []string{"a", "b", "c"}, []string{"b", "c", "d"}, []string{"d"}},
		{"all live lines saved", []string{"a", "b"}, []string{"a", "b"}, []string{}},
		{"repeated lines: the longest overlap", []string{"x", "x", "x"}, []string{"x", "x", "y"}, []string{"y"}},
		{"a saved line inside, not at the end", []string{"a", "b", "c"}, []string{"b", "d"}, []string{"b", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dropOverlap(tt.saved, tt.live); !slices.Equal(got, tt.want) {
				t.Errorf("dropOverlap(%q, %q) = %q, want %q", tt.saved, tt.live, got, tt.want)
			}
		})
	}
}
