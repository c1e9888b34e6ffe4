package run

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestRecordUsageJSON(t *testing.T) {
	for _, tc := range []struct {
		name  string
		usage Usage
		want  string // the cost fields of the JSON form
		back  Usage  // what reading it back gives
	}{
		{"not measured", Usage{},
			`"cpu_user_ms":null,"cpu_system_ms":null,"memory_peak_bytes":null,"oom_killed":false`, Usage{}},
		{"measured, no memory controller",
			Usage{Measured: true, CPUUser: 520*time.Millisecond + 300*time.Microsecond, CPUSystem: 30 * time.Millisecond},
			`"cpu_user_ms":520,"cpu_system_ms":30,"memory_peak_bytes":null,"oom_killed":false`,
			Usage{Measured: true, CPUUser: 520 * time.Millisecond, CPUSystem: 30 * time.Millisecond}},
		{"measured, nothing burnt", Usage{Measured: true},
			`"cpu_user_ms":0,"cpu_system_ms":0,"memory_peak_bytes":null,"oom_killed":false`, Usage{Measured: true}},
		{"measured with memory, OOM killed",
			Usage{Measured: true, CPUUser: time.Second, MemoryPeak: 120 << 20, OOMKilled: true},
			`"cpu_user_ms":1000,"cpu_system_ms":0,"memory_peak_bytes":125829120,"oom_killed":true`,
			Usage{Measured: true, CPUUser: time.Second, MemoryPeak: 120 << 20, OOMKilled: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(Record{Job: "j", RunID: "r1", Outcome: OK, StartedAt: ref(), Usage: tc.usage})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(b), ","+tc.want+`,"progress":"","resources":[],"resource_wait_ms":null}`) {
				t.Errorf("JSON %s\ndoes not end with %s", b, tc.want)
			}
			var back Record
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.Usage != tc.back {
				t.Errorf("read back %+v, want %+v", back.Usage, tc.back)
			}
		})
	}
}

func TestUsageWithOOM(t *testing.T) {
	oom := Usage{Measured: true, OOMKilled: true}
	for _, tc := range []struct {
		name   string
		usage  Usage
		reason string
		want   string
	}{
		{"not killed", Usage{Measured: true}, "ended by signal SIGKILL", "ended by signal SIGKILL"},
		{"killed, no reason", oom, "", OOMReason},
		{"killed, with the signal", oom, "ended by signal SIGKILL", OOMReason + "; ended by signal SIGKILL"},
		{"said already", oom, OOMReason + "; x", OOMReason + "; x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.usage.WithOOM(tc.reason); got != tc.want {
				t.Errorf("WithOOM(%q) = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}
