package proc

import (
	"os"
	"testing"
	"time"

	"cronvisor/internal/base/procfs"
)

// TestKeeperFlagsReadWhatKeeperArgsWrites: every argument keeperArgs
// writes comes back from parseKeeperFlags as it was.
func TestKeeperFlagsReadWhatKeeperArgsWrites(t *testing.T) {
	slot := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	deadline := slot.Add(90*time.Second + 123456789)
	k := Keeper{EndAtOnce: true, Within: 8 * time.Second, Session: os.Stdin, Handoff: []byte("h"),
		Deadline: deadline, Timeout: 90 * time.Second, End: "/state/runs", NoSync: true,
		Log: "/state/logs/job/run.log", LogLimit: 1 << 20,
		Run: KeptRun{Job: "nightly sync", Slot: slot, Attempt: 3, Manual: true}}
	spec := Spec{Tag: "CRONVISOR_RUN_ID=20261204T180000-0a1b2c3d", KillGrace: 10 * time.Second,
		ExtraFiles: []*os.File{os.Stdin}, Heartbeat: &Heartbeat{Timeout: time.Minute}}
	args := keeperArgs(k, spec, "/sys/fs/cgroup/cronvisor/run-x")
	f, ok := parseKeeperFlags(args[1:])
	if !ok {
		t.Fatalf("parseKeeperFlags(%q) refused", args[1:])
	}
	want := keeperFlags{tag: spec.Tag, end: k.End, log: k.Log, logLimit: k.LogLimit, noSync: true,
		cgroup: "/sys/fs/cgroup/cronvisor/run-x", grace: guardGrace(spec.KillGrace, k.Within),
		atOnce: true, session: true, lease: true, within: k.Within, timeout: k.Timeout,
		deadline: deadline, lock: true, beats: true, heartbeatTimeout: time.Minute,
		run: KeptRun{Job: "nightly sync", Slot: slot, Attempt: 3, Manual: true, SupervisorPID: procfs.Self()}}
	if !f.deadline.Equal(want.deadline) || !f.run.Slot.Equal(want.run.Slot) {
		t.Fatalf("deadline, slot = %v, %v; want %v, %v", f.deadline, f.run.Slot, want.deadline, want.run.Slot)
	}
	f.deadline, f.run.Slot, want.deadline, want.run.Slot = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if f != want {
		t.Fatalf("parsed\n%+v\nwant\n%+v", f, want)
	}
	if f, ok := parseKeeperFlags(keeperArgs(Keeper{}, Spec{Tag: "T=1"}, "")[1:]); !ok || f.tag != "T=1" || f.atOnce || f.lock {
		t.Fatalf("a bare hand-over parsed as %+v, %v", f, ok)
	}
}

// TestKeeperFlagsForms: the flag package's forms are read; anything else
// is refused, not guessed at.
func TestKeeperFlagsForms(t *testing.T) {
	f, ok := parseKeeperFlags([]string{"--tag=A=B", "-grace", "2s", "-lock=false", "--beats", "-attempt=2"})
	if !ok || f.tag != "A=B" || f.grace != 2*time.Second || f.lock || !f.beats || f.run.Attempt != 2 {
		t.Fatalf("got %+v, %v", f, ok)
	}
	for _, bad := range [][]string{
		{"-unknown", "x"},
		{"-grace"},            // no value
		{"-grace", "soon"},    // malformed
		{"-lock=maybe"},       // a switch's value is a bool
		{"-tag", "x", "left"}, // no flag
		{"-"},
		{"--"},
		{"-=x"},
		{"-deadline", "tomorrow"},
	} {
		if f, ok := parseKeeperFlags(bad); ok {
			t.Errorf("parseKeeperFlags(%q) = %+v, accepted", bad, f)
		}
	}
}

// BenchmarkKeeperFlags is a daemon run's hand-over read, as a keeper
// reads one per run.
func BenchmarkKeeperFlags(b *testing.B) {
	slot := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	k := Keeper{Deadline: slot.Add(time.Minute), Timeout: time.Minute, End: "/state/runs",
		Log: "/state/logs/job/run.log", Run: KeptRun{Job: "job-00001", Slot: slot, Attempt: 1}}
	spec := Spec{Tag: "CRONVISOR_RUN_ID=20261204T180000-0a1b2c3d", KillGrace: 10 * time.Second,
		ExtraFiles: []*os.File{os.Stdin}, Heartbeat: &Heartbeat{}}
	args := keeperArgs(k, spec, "/sys/fs/cgroup/cronvisor/run-20261204T180000-0a1b2c3d")[1:]
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := parseKeeperFlags(args); !ok {
			b.Fatal("refused")
		}
	}
}
