package proc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/proc/cgroup"
)

// cgroupEnv makes the guarded supervisor helper (see TestMain) start its
// run in a cgroup leaf.
const cgroupEnv = "PROCTEST_CGROUP"

// hierarchy is this host's cgroup v2 hierarchy: tests run as root on a
// host where it is usable (CI's included).
func hierarchy(t *testing.T) *cgroup.Hierarchy {
	t.Helper()
	h, err := cgroup.Detect()
	if err != nil {
		t.Fatalf("cgroup v2 must be usable here (tests run as root): %v", err)
	}
	return h
}

// escapeeScript forks a process that clears its environment, closes fd
// 3, leaves the group and the session and sleeps with arg: nothing but
// its cgroup finds it.
func escapeeScript(arg string) string {
	return fmt.Sprintf(`setsid env -i sh -c 'exec 3>&-; exec sleep %s' </dev/null >/dev/null 2>&1 &`, arg)
}

// withArg lists the live processes with arg as a word of their command line.
func withArg(arg string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || gone(pid) {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if slices.Contains(strings.Split(string(b), "\x00"), arg) {
			out = append(out, pid)
		}
	}
	return out
}

func killWithArg(t *testing.T, arg string) {
	t.Cleanup(func() {
		for _, pid := range withArg(arg) {
			t.Errorf("process %d of the run survived", pid)
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	})
}

func TestRunInLeafEndsWhatEscapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		script  string
		timeout time.Duration
		want    Outcome
	}{
		{name: "main exits, escapee left", script: "%s echo hi", timeout: 5 * time.Second, want: Exited},
		{name: "deadline, TERM ignored", script: "%s trap '' TERM; while :; do sleep 0.05; done", timeout: 300 * time.Millisecond, want: TimedOut},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			arg := fmt.Sprintf("61.%d%d", os.Getpid()%10000, i)
			killWithArg(t, arg)
			spec := testSpec(t, fmt.Sprintf(tt.script, escapeeScript(arg)))
			spec.Cgroup, spec.KillGrace = hierarchy(t), 200*time.Millisecond
			var leaf string
			spec.OnStart = func(pid int) { leaf = cgroupOf(t, pid) }
			res := Run(within(t, tt.timeout), spec)
			if res.Outcome != tt.want || (tt.want == Exited && res.ExitCode != 0) {
				t.Fatalf("got %+v, want %s", res, tt.want)
			}
			if left := withArg(arg); len(left) > 0 {
				t.Fatalf("escapees %v alive when Run returned", left)
			}
			if !res.Usage.Measured {
				t.Errorf("usage not measured: %+v", res.Usage)
			}
			if want := filepath.Join(spec.Cgroup.Root, leafName(spec.Tag)); leaf != want {
				t.Errorf("main process in cgroup %q, want %q", leaf, want)
			}
			if _, err := os.Stat(leaf); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("leaf %s not removed: %v", leaf, err)
			}
		})
	}
}

// cgroupOf is the cgroup directory of pid.
func cgroupOf(t *testing.T, pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		t.Error(err)
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			h, _ := cgroup.Detect()
			return filepath.Join(h.Mount, p)
		}
	}
	return ""
}

func TestRunInLeafMeasuresCPU(t *testing.T) {
	t.Parallel()
	spec := testSpec(t, "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	spec.Cgroup = hierarchy(t)
	res := Run(within(t, 10*time.Second), spec)
	if res.Outcome != Exited || res.ExitCode != 0 {
		t.Fatalf("got %+v", res)
	}
	if u := res.Usage; !u.Measured || u.CPUUser+u.CPUSystem < 10*time.Millisecond {
		t.Fatalf("usage %+v of a busy run, want measured and at least 10ms of CPU", u)
	}
	if res := Run(within(t, 10*time.Second), testSpec(t, "true")); res.Usage.Measured {
		t.Fatalf("a run without a cgroup measured: %+v", res.Usage)
	}
}

func TestRunLimitsThatCannotApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cg      *cgroup.Hierarchy
		lim     cgroup.Limits
		wantErr string
	}{
		{name: "no hierarchy", lim: cgroup.Limits{MemoryMax: 1 << 30}, wantErr: "limits: memory_max needs a cgroup v2 leaf"},
		{name: "controller not enabled", cg: &cgroup.Hierarchy{Root: t.TempDir()}, lim: cgroup.Limits{TasksMax: 10},
			wantErr: "limits: tasks_max needs the pids controller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSpec(t, "echo should not run")
			spec.Cgroup, spec.Limits = tt.cg, tt.lim
			res := Run(within(t, 5*time.Second), spec)
			if res.Outcome != StartFailed || res.Err == nil || !strings.Contains(res.Err.Error(), tt.wantErr) {
				t.Fatalf("got %+v, want StartFailed saying %q", res, tt.wantErr)
			}
		})
	}
}

func TestRunWritesLimitsBeforeStart(t *testing.T) {
	t.Parallel()
	root := t.TempDir() // laid out as cgroupfs: the run starts in it only if it is one
	h := &cgroup.Hierarchy{Root: root, Controllers: []string{"memory", "pids"}}
	spec := testSpec(t, "true")
	spec.Cgroup, spec.Limits = h, cgroup.Limits{MemoryMax: 1 << 20, TasksMax: 7}
	res := Run(within(t, 5*time.Second), spec)
	// A directory that is not a cgroup refuses clone3's CLONE_INTO_CGROUP:
	// the run does not start, but what it wrote first is there to see.
	if res.Outcome != StartFailed {
		t.Fatalf("got %+v, want StartFailed (not a cgroup)", res)
	}
	for file, want := range map[string]string{"memory.max": "1048576", "pids.max": "7"} {
		if b, err := os.ReadFile(filepath.Join(root, leafName(spec.Tag), file)); err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", file, b, err, want)
		}
	}
}

func TestKeeperEndsTheRunThroughItsLeaf(t *testing.T) {
	t.Parallel()
	arg := fmt.Sprintf("62.%d", os.Getpid()%10000)
	killWithArg(t, arg)
	tag := fmt.Sprintf("CRONVISOR_RUN_ID=test-%d-%d", os.Getpid(), runSeq.Add(1))
	sup := exec.Command("/proc/self/exe")
	sup.Env = append(os.Environ(), sessionTag, cgroupEnv+"=1", "PROCTEST_TAG="+tag,
		supervisorEnv+"="+escapeeScript(arg)+" exec sleep 30")
	stdout, err := sup.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	startOutside(t, sup)
	var main int
	if _, err := fmt.Fscanf(bufio.NewReader(stdout), "pid %d\n", &main); err != nil {
		t.Fatalf("supervisor: %v", err)
	}
	if !testlog.Poll(5*time.Second, func() bool { return len(withArg(arg)) == 1 }) {
		t.Fatal("the escapee did not start")
	}
	leaf := cgroupOf(t, main)
	for _, pid := range guards(tag) {
		if c := cgroupOf(t, pid); c == leaf {
			t.Fatalf("keeper %d is in the run's leaf %s", pid, c)
		}
	}
	if err := sup.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if !testlog.Poll(5*time.Second, func() bool { return len(withArg(arg)) == 0 && gone(main) }) {
		t.Fatalf("run still alive 5 s after its supervisor died: %v", withArg(arg))
	}
	if !testlog.Poll(2*time.Second, func() bool { _, err := os.Stat(leaf); return errors.Is(err, os.ErrNotExist) }) {
		t.Errorf("the keeper left the leaf %s", leaf)
	}
	if !testlog.Poll(2*time.Second, func() bool { return len(guards(tag)) == 0 }) {
		t.Errorf("keeper still alive after ending the run: %v", guards(tag))
	}
}

// BenchmarkRunContained is what a cgroup leaf adds to a short run
// (/bin/true), against the same run contained by process tree in the
// same benchmark: the leaf's mkdir, its descriptor, clone3 into it, the
// wait on cgroup.events, cpu.stat's read and the rmdir. start-µs is from
// Run's call to the main process's start (OnStart), cpu-ms the
// supervisor's own CPU (user+system) per run.
func BenchmarkRunContained(b *testing.B) {
	h, err := cgroup.Detect()
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cg   *cgroup.Hierarchy
	}{{"process tree", nil}, {"cgroup", h}} {
		b.Run(tc.name, func(b *testing.B) {
			var call time.Time
			var lateness time.Duration
			spec := Spec{Argv: []string{"/bin/true"}, Tag: "CRONVISOR_RUN_ID=bench-" + strconv.Itoa(os.Getpid()), Cgroup: tc.cg,
				OnStart: func(int) { lateness += time.Since(call) }}
			cpu0 := selfCPU()
			for b.Loop() {
				call = time.Now()
				if res := Run(b.Context(), spec); res.ExitCode != 0 || res.Usage.Measured != (tc.cg != nil) {
					b.Fatalf("%+v", res)
				}
			}
			b.ReportMetric(float64(lateness.Microseconds())/float64(b.N), "start-µs/op")
			b.ReportMetric(float64((selfCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// selfCPU is this process's CPU time, user and system.
func selfCPU() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
