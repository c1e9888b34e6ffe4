package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
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

// TestNextFireWording: the second a fire is due, the words around the
// countdown still read (issue 43: "next fire in due at 10:09:20").
func TestNextFireWording(t *testing.T) {
	tests := []struct {
		name string
		next time.Time
		want string
	}{
		{"ahead", at(3 * time.Second), "idle, next fire in 3s at 12:00:03"},
		{"due this second", ref, "idle, next fire due at 12:00:00"},
		{"passed, not yet moved", at(-time.Second), "idle, next fire due at 11:59:59"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := ctl.JobStatus{State: ctl.StateIdle, NextRun: tc.next}
			if got := nowText(j, ref); got != tc.want {
				t.Errorf("nowText = %q, want %q", got, tc.want)
			}
		})
	}
	j := ctl.JobStatus{State: ctl.StateRetrying, Attempt: 2, MaxAttempts: 3, RetryAt: ref}
	if got, want := nowText(j, ref), "retry 2/3 at 12:00:00 (due), under the slot's lock"; got != want {
		t.Errorf("nowText(retrying) = %q, want %q", got, want)
	}
}

func TestClock(t *testing.T) {
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"today", at(-time.Hour), "11:00:00"},
		{"another day", at(-25 * time.Hour), "2026-03-13 11:00:00"},
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
		r    run.Record
		want string
	}{
		{"overlapping itself", run.Record{Job: "a", Outcome: "skipped", ScheduledAt: ref, Holder: h("a")}, "held by pid 42@h for 1.5s"},
		{"another job's lock", run.Record{Job: "a", Outcome: "skipped", ScheduledAt: ref, Holder: h("b")}, "held by pid 42@h (b) for 1.5s"},
		{"outside cronvisor", run.Record{Job: "a", Outcome: "skipped", ScheduledAt: ref, Holder: h("")}, "held by pid 42@h (outside cronvisor) for 1.5s"},
		{"a skip without holder", run.Record{Outcome: "skipped", Reason: "queue full"}, "queue full"},
		{"failed manual run", run.Record{Outcome: "failed", ExitCode: exitCode(2), Reason: "exit status 2", Manual: true}, "exit status 2 · manual"},
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

// TestDurationsPrintOneWay is issue 25's point 6: a measured span reads
// 999ms, 2.0s, 10s, 19s, 1m05s; it is rounded before its unit is chosen,
// so nothing reads 10.0s or 1000ms.
func TestDurationsPrintOneWay(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{999 * time.Millisecond, "999ms"}, {999700 * time.Microsecond, "1.0s"}, {2 * time.Second, "2.0s"},
		{9960 * time.Millisecond, "10s"}, {10 * time.Second, "10s"}, {19400 * time.Millisecond, "19s"},
		{65 * time.Second, "1m05s"},
	} {
		if got := precise(tc.d); got != tc.want {
			t.Errorf("precise(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestTimesPrintOneWay is issue 25's point 6: the RFC 3339 times inside
// a reason or note read as the console prints every time (15:04:05 today,
// 2006-01-02 15:04:05 another day).
func TestTimesPrintOneWay(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"lock held by pid 7@h (job a, run r1) since 2026-03-14T11:59:35Z", "lock held by pid 7@h (job a, run r1) since 11:59:35"},
		{"missed (3 fires from 2026-03-13T10:00:00Z)", "missed (3 fires from 2026-03-13 10:00:00)"},
		{"since 2026-03-14T13:00:05.5+01:00 and no time", "since 12:00:05 and no time"},
		{"exit 3: last stderr: \"T-1\"", "exit 3: last stderr: \"T-1\""},
	} {
		if got := localTimes(ref, tc.in); got != tc.want {
			t.Errorf("localTimes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	f := newFake()
	f.records[0].Holder = nil // a skip told by its reason alone
	f.records[0].Reason = "lock held by pid 4321@web-1 (job sync_orders, run r-sync-7) since 2026-03-14T11:59:35Z"
	m, _ := press(loaded(t, f, Options{}, 200, 30), "3")
	if s := m.View(); strings.Contains(s, "T11:59:35Z") || !strings.Contains(s, "since 11:59:35") {
		t.Errorf("a reason's time is not printed as the cells' are:\n%s", s)
	}
}

// TestReasonsDoNotRepeat is issue 25's point 6: a reason that names the
// exit code is not preceded by the same exit code.
func TestReasonsDoNotRepeat(t *testing.T) {
	for _, tc := range []struct {
		r    run.Record
		want string
	}{
		{run.Record{Outcome: "failed", ExitCode: exitCode(3), Reason: `exit 3: last stderr: "connection refused"`}, `exit 3: last stderr: "connection refused"`},
		{run.Record{Outcome: "failed", ExitCode: exitCode(3), Reason: "exit status 3"}, "exit status 3"},
		{run.Record{Outcome: "failed", ExitCode: exitCode(3), Reason: "exit 30: x"}, "exit 3 · exit 30: x"},
		{run.Record{Outcome: "failed", ExitCode: exitCode(1)}, "exit 1"},
	} {
		if got := recordDetail(tc.r); got != tc.want {
			t.Errorf("recordDetail(%q) = %q, want %q", tc.r.Reason, got, tc.want)
		}
	}
}
