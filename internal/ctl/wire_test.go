package ctl

import (
	"encoding/json"
	"testing"
	"time"
)

// TestWireJSON pins the socket's JSON: snake_case names, a null holder
// for a free lock, times left out where they do not apply.
func TestWireJSON(t *testing.T) {
	code := 1
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"idle job never run", JobStatus{Name: "j", Schedule: "@daily", Timezone: "UTC", State: StateIdle, Lock: "j",
			NextRun: ref(0), Enabled: true},
			`{"name":"j","schedule":"@daily","timezone":"UTC","state":"idle","paused":false,"run_id":"","pid":0,` +
				`"last_outcome":"","next_run":"2026-03-14T09:26:53Z","lock":"j","holder":null,"enabled":true,` +
				`"counts":{"runs":0,"skips":0,"failures":0}}`},
		{"lock held outside cronvisor", LockStatus{Lock: "x", Held: true, PID: 7, Since: ref(time.Millisecond), Foreign: true, Cmdline: "flock x"},
			`{"lock":"x","held":true,"pid":7,"host":"","job":"","run_id":"","since":"2026-03-14T09:26:53.001Z",` +
				`"supervisor_pid":0,"foreign":true,"cmdline":"flock x"}`},
		{"output event", WireEvent{Type: EventRunOutput, Job: "j", RunID: "r", Time: ref(0), Stream: "stdout", Line: "hi"},
			`{"type":"run_output","job":"j","run_id":"r","time":"2026-03-14T09:26:53Z","stream":"stdout","line":"hi"}`},
		{"finished event", WireEvent{Type: EventRunFinished, Job: "j", RunID: "r", Time: ref(time.Second), StartedAt: ref(0),
			Outcome: "failed", ExitCode: &code},
			`{"type":"run_finished","job":"j","run_id":"r","time":"2026-03-14T09:26:54Z","started_at":"2026-03-14T09:26:53Z",` +
				`"outcome":"failed","exit_code":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}
