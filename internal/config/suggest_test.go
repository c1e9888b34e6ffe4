package config

import (
	"slices"
	"testing"
)

func TestNearest(t *testing.T) {
	names := []string{"sync_orders", "sync_users", "backup", "report_daily", "cleanup"}
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"one typo", "sync_order", []string{"sync_orders"}},
		{"swap and case", "Bakcup", []string{"backup"}},
		{"prefix lists all", "sync", []string{"sync_users", "sync_orders"}},
		{"nothing close", "zzzzzz", []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Nearest(tc.query, names, 3); !slices.Equal(got, tc.want) {
				t.Errorf("Nearest(%q) = %q, want %q", tc.query, got, tc.want)
			}
		})
	}
}
