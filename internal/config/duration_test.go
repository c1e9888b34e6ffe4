package config

import (
	"errors"
	"testing"
	"time"
)

// TestDurationsTakeDaysAndWeeks (issue 25, point 6): durations in
// jobs.yaml take d and w as `history --since` does.
func TestDurationsTakeDaysAndWeeks(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  error // nil: want no error; errAny: any
	}{
		{"90s", 90 * time.Second, nil},
		{"1d", day, nil},
		{"2w", 14 * day, nil},
		{"1d12h", 36 * time.Hour, nil},
		{"1w2d3h", 9*day + 3*time.Hour, nil},
		{"-1d", -day, nil},
		{"1.5d", 0, errAny},
		{"d", 0, errAny},
		{"1dd", 0, errAny},
		{"1d 2h", 0, errAny},
		{"99999999999999w", 0, ErrDurationRange},
		{"106751d23h47m16.854775807s", maxDuration, nil},
		{"106751d23h47m16.854775808s", 0, ErrDurationRange},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDuration(tc.in)
			switch {
			case tc.err == nil && (err != nil || got != tc.want):
				t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			case tc.err == errAny && err == nil, tc.err != nil && tc.err != errAny && !errors.Is(err, tc.err):
				t.Errorf("ParseDuration(%q) = %v, %v; want an error (%v)", tc.in, got, err, tc.err)
			}
		})
	}
	cfg, ps := Parse("jobs.yaml", []byte("jobs:\n  - name: a\n    schedule: '@every 2d'\n    command: x\n    timeout: 1d\n    catch_up: 1w\n"))
	if cfg == nil || cfg.Jobs[0].Timeout != day || cfg.Jobs[0].CatchUp != 7*day {
		t.Fatalf("@every 2d, timeout: 1d, catch_up: 1w: %v", ps)
	}
	from := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if next := cfg.Jobs[0].Sched.Next(from); next.Sub(from) > 2*day || next.Sub(cfg.Jobs[0].Sched.Next(next)) != -2*day {
		t.Errorf("@every 2d fires at %v, then %v", next, cfg.Jobs[0].Sched.Next(next))
	}
}

var errAny = errors.New("any error")
