package ui

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"cronvisor/ctl"
	"cronvisor/history"
	"cronvisor/run"
)

func TestDur(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {-time.Second, "0s"}, {999 * time.Millisecond, "0s"}, {45 * time.Second, "45s"},
		{65 * time.Second, "1m05s"}, {10 * time.Minute, "10m"}, {time.Hour + 3*time.Minute, "1h03m"},
		{2 * time.Hour, "2h"}, {50 * time.Hour, "2d02h"}, {72 * time.Hour, "3d"},
	}
	for _, tc := range tests {
		t.Run(tc.d.String(), func(t *testing.T) {
			if got := dur(tc.d); got != tc.want {
				t.Errorf("dur(%s) = %q, want %q", tc.d, got, tc.want)
			}
		})
	}
}

func TestPrecise(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{{850 * time.Millisecond, "850ms"}, {1500 * time.Millisecond, "1.5s"}, {20 * time.Second, "20s"}, {-1, "0s"}}
	for _, tc := range tests {
		t.Run(tc.d.String(), func(t *testing.T) {
			if got := precise(tc.d); got != tc.want {
				t.Errorf("precise(%s) = %q, want %q", tc.d, got, tc.want)
			}
		})
	}
}

func TestCountdown(t *testing.T) {
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"none", time.Time{}, "—"},
		{"passed", at(-time.Second), "due"},
		{"now", ref, "due"},
		{"half a second rounds up", at(500 * time.Millisecond), "1s"},
		{"minutes", at(4*time.Minute + 12*time.Second), "4m12s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := countdown(ref, tc.t); got != tc.want {
				t.Errorf("countdown = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClock(t *testing.T) {
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"today", at(-time.Hour), "11:00:00"},
		{"another day", at(-25 * time.Hour), "Mar 13 11:00"},
		{"zero", time.Time{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := clock(ref, tc.t); got != tc.want {
				t.Errorf("clock = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFit(t *testing.T) {
	tests := []struct {
		s    string
		w    int
		want string
	}{
		{"abc", 5, "abc  "}, {"abcdef", 4, "abc…"}, {"abc", 0, ""}, {"▶ 1s", 4, "▶ 1s"}, {"\x1b[1mbold\x1b[0m", 3, "\x1b[1mbo…\x1b[0m"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q/%d", tc.s, tc.w), func(t *testing.T) {
			if got := fit(tc.s, tc.w); got != tc.want {
				t.Errorf("fit = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHolderKind(t *testing.T) {
	job := ctl.JobStatus{Name: "sync", RunID: "r1"}
	tests := []struct {
		name string
		h    run.Holder
		want string
	}{
		{"its own run", run.Holder{Job: "sync", RunID: "r1"}, "own"},
		{"flock(1)", run.Holder{Foreign: true}, "foreign"},
		{"a job sharing the lock", run.Holder{Job: "refund", RunID: "r9"}, "refund"},
		{"itself under another supervisor", run.Holder{Job: "sync", RunID: "r0"}, "sync"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := holderKind(job, &tc.h); got != tc.want {
				t.Errorf("holderKind = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRecordDetail(t *testing.T) {
	h := func(job string) *run.Holder {
		return &run.Holder{PID: 42, Host: "h", Job: job, Since: at(-1500 * time.Millisecond)}
	}
	tests := []struct {
		name string
		r    history.Record
		want string
	}{
		{"overlapping itself", history.Record{Job: "a", Outcome: "skipped", ScheduledAt: ref, Holder: h("a")}, "held by pid 42@h for 1.5s"},
		{"another job's lock", history.Record{Job: "a", Outcome: "skipped", ScheduledAt: ref, Holder: h("b")}, "held by pid 42@h (b) for 1.5s"},
		{"outside cronvisor", history.Record{Job: "a", Outcome: "skipped", ScheduledAt: ref, Holder: h("")}, "held by pid 42@h (outside cronvisor) for 1.5s"},
		{"a skip without holder", history.Record{Outcome: "skipped", Reason: "queue full"}, "queue full"},
		{"failed manual run", history.Record{Outcome: "failed", ExitCode: exitCode(2), Reason: "exit status 2", Manual: true}, "exit 2 · exit status 2 · manual"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := recordDetail(tc.r); got != tc.want {
				t.Errorf("recordDetail = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLayout(t *testing.T) {
	cols := []column{
		{min: 4, want: 8, max: 10, grow: 2},
		{min: 5, want: 5, max: 5, drop: 2},
		{min: 6, want: 10, max: 30, drop: 1, grow: 1},
	}
	tests := []struct {
		width int
		want  []int
	}{
		{100, []int{10, 5, 30}}, // all at max
		{31, []int{8, 5, 14}},   // want fits; the rest by grow order
		{27, []int{8, 5, 10}},   // exactly the wanted widths
		{20, []int{8, 0, 10}},   // column 2 drops first
		{12, []int{10, 0, 0}},   // then column 3
		{3, []int{4, 0, 0}},     // never below min
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.width), func(t *testing.T) {
			if got := layout(cols, tc.width); !slices.Equal(got, tc.want) {
				t.Errorf("layout(%d) = %v, want %v", tc.width, got, tc.want)
			}
		})
	}
}
