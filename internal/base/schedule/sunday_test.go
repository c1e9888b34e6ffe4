package schedule

import (
	"testing"
	"time"
)

func TestSundayAsSeven(t *testing.T) {
	from := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // a Monday
	tests := []struct {
		expr string
		want string // the first fire after from
	}{
		{"0 9 * * 7", "2026-03-08T09:00:00Z"},
		{"0 9 * * 0", "2026-03-08T09:00:00Z"},
		{"0 9 * * 6-7", "2026-03-07T09:00:00Z"},
		{"0 9 * * 5-7", "2026-03-06T09:00:00Z"},
		{"0 9 * * 1,7", "2026-03-02T09:00:00Z"},
		{"0 0 9 * * 7", "2026-03-08T09:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			s, err := Parse(tc.expr, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Next(from).Format(time.RFC3339); got != tc.want {
				t.Errorf("Next = %s, want %s", got, tc.want)
			}
		})
	}
	// 7 closes the week: 5-7 is Friday, Saturday and Sunday, nothing else.
	s, _ := Parse("0 9 * * 5-7", time.UTC)
	var days []time.Weekday
	for _, ti := range NextN(s, from, 4) {
		days = append(days, ti.Weekday())
	}
	want := []time.Weekday{time.Friday, time.Saturday, time.Sunday, time.Friday}
	for i := range want {
		if days[i] != want[i] {
			t.Fatalf("weekdays %v, want %v", days, want)
		}
	}
}
