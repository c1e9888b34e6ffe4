package run

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func ref() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

func TestHolderString(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    Holder
		want string
	}{
		{"cronvisor run", Holder{PID: 42, Host: "web-1", Job: "sync", RunID: "r1", Since: ref()},
			"pid 42@web-1 (job sync, run r1) since 2026-03-01T12:00:00Z"},
		{"no since", Holder{PID: 42, Host: "web-1", Job: "sync", RunID: "r1"}, "pid 42@web-1 (job sync, run r1)"},
		{"no job", Holder{PID: 42, Host: "web-1"}, "pid 42@web-1"},
		{"outside cronvisor", Holder{PID: 7, Foreign: true, Cmdline: "flock -n x sleep 9"},
			"pid 7 (outside cronvisor: flock -n x sleep 9)"},
		{"outside cronvisor, no command line", Holder{PID: 7, Foreign: true}, "pid 7 (outside cronvisor)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.h.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHolderJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    Holder
		want string
	}{
		{"cronvisor run", Holder{PID: 42, Host: "h", Job: "j", RunID: "r", Since: ref()},
			`{"pid":42,"host":"h","job":"j","run_id":"r","since":"2026-03-01T12:00:00Z"}`},
		{"no since", Holder{PID: 42, Host: "h"}, `{"pid":42,"host":"h","job":"","run_id":""}`},
		{"outside cronvisor", Holder{PID: 7, Foreign: true, Cmdline: "flock x"},
			`{"pid":7,"host":"","job":"","run_id":"","foreign":true,"cmdline":"flock x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.h)
			if err != nil || string(b) != tc.want {
				t.Fatalf("Marshal = %s, %v; want %s", b, err, tc.want)
			}
			var back Holder
			if err := json.Unmarshal(b, &back); err != nil || back != tc.h {
				t.Errorf("Unmarshal = %+v, %v; want %+v", back, err, tc.h)
			}
		})
	}
}

func TestOutcomeFinal(t *testing.T) {
	for _, o := range []Outcome{OK, Failed, Timeout, Skipped, Replaced, Interrupted, Error} {
		if !o.Final() {
			t.Errorf("%q.Final() = false", o)
		}
	}
	for _, o := range []Outcome{Running, "", "OK", "done"} {
		if o.Final() {
			t.Errorf("%q.Final() = true", o)
		}
	}
}

func TestNewIDAndTag(t *testing.T) {
	a, b := NewID(ref()), NewID(ref())
	if a == b || !strings.HasPrefix(a, "20260301T120000-") || len(a) != len("20260301T120000-")+8 {
		t.Errorf("NewID = %q, %q; want distinct time-sortable ids", a, b)
	}
	if got := Tag("r1"); got != "CRONVISOR_RUN_ID=r1" {
		t.Errorf("Tag = %q", got)
	}
}
