package proc

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

// TestTetherRoundTrip: what each side writes on a tether, the other reads
// back as it was meant, whether the lines come one by one or together.
func TestTetherRoundTrip(t *testing.T) {
	started := time.Unix(0, 1_700_000_000_123_456_789)
	handoff := []byte("{\"kind\":\"redis\",\"key\":\"a b\"}\x00\xff")
	lines := []string{leaseLine(handoff), pidLine(4242, started), exitedLine(started.Add(time.Second)), stopLine}
	want := []tetherMsg{
		{kind: tetherLease, handoff: handoff},
		{kind: tetherPID, pid: 4242, started: started},
		{kind: tetherExited, at: started.Add(time.Second)},
		{kind: tetherStop},
	}
	for i, line := range lines {
		if got := parseTetherLine(line); !sameMsg(got, want[i]) {
			t.Errorf("parseTetherLine(%q) = %+v, want %+v", line, got, want[i])
		}
	}
	got := parseTether(lines[0] + lines[1] + lines[2] + lines[3])
	if len(got) != len(want) {
		t.Fatalf("parseTether of the four lines: %d messages, want %d", len(got), len(want))
	}
	for i := range got {
		if !sameMsg(got[i], want[i]) {
			t.Errorf("parseTether message %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if at := parseExited(exitedLine(started)); !at.Equal(started) {
		t.Errorf("parseExited = %v, want %v", at, started)
	}
}

// TestTetherRefusesMalformedLines: a line that is no well-formed message
// is no message at all, never a half-read one (a pid of 0, a lease cut
// short).
func TestTetherRefusesMalformedLines(t *testing.T) {
	for _, line := range []string{
		"", "\n", "hello", "stop now", "STOP", "pid", "pid x", "pid -3", "pid 0",
		"pid 12 34 56", "lease", "lease !!notbase64", "lease a b", "exited", "exited soon",
		"exited 1 2", "ready",
	} {
		if got := parseTetherLine(line); got.kind != tetherNone {
			t.Errorf("parseTetherLine(%q) = %+v, want no message", line, got)
		}
	}
	if got := parseTetherLine("pid 42"); got.kind != tetherPID || got.pid != 42 || !got.started.IsZero() {
		t.Errorf(`parseTetherLine("pid 42") = %+v, want pid 42 without a start`, got)
	}
	if got := parseTetherLine("pid 42 later"); got.kind != tetherPID || !got.started.IsZero() {
		t.Errorf(`parseTetherLine("pid 42 later") = %+v, want pid 42 without a start`, got)
	}
	if at := parseExited("stop\n"); !at.IsZero() {
		t.Errorf("parseExited(stop) = %v, want zero", at)
	}
}

// TestHandoverRoundTrip: a run's keeperArgs come through the control
// socket's message as they were, empty arguments included.
func TestHandoverRoundTrip(t *testing.T) {
	args := []string{KeeperName, "-tag", "CRONVISOR_RUN_ID=r 1", "-job", "", "-grace", "5s"}
	if got := decodeHandover(encodeHandover(args)); !slices.Equal(got, args) {
		t.Errorf("decodeHandover(encodeHandover(%q)) = %q", args, got)
	}
}

// TestKeeperSocketRoundTrip: requests and the "runs" answer read back as
// written; lines of the answer that are none of its are skipped.
func TestKeeperSocketRoundTrip(t *testing.T) {
	for _, tc := range []struct{ verb, id string }{{verbRuns, ""}, {verbEnd, "r1"}, {verbReplace, "r2"}, {verbWatch, "r3"}} {
		if verb, id := parseRequest(request(tc.verb, tc.id)); verb != tc.verb || id != tc.id {
			t.Errorf("parseRequest(request(%q, %q)) = %q, %q", tc.verb, tc.id, verb, id)
		}
	}
	runs := []KeptInfo{{RunID: "r1", Job: "backup", SupervisorPID: 10}, {RunID: "r2", Job: "a job with spaces", SupervisorPID: 11}}
	var answer bytes.Buffer
	for _, k := range runs {
		answer.WriteString(runsLine(k))
	}
	answer.WriteString("r3 notapid job\n\nr4 12\n" + answerUnknown + "\n")
	if got := parseRuns(answer.String()); !slices.Equal(got, runs) {
		t.Errorf("parseRuns = %+v, want %+v", got, runs)
	}
}

func sameMsg(a, b tetherMsg) bool {
	return a.kind == b.kind && a.pid == b.pid && a.started.Equal(b.started) &&
		bytes.Equal(a.handoff, b.handoff) && a.at.Equal(b.at)
}
