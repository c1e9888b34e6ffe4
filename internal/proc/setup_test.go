package proc

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/harness/testlog"
)

func intp(v int) *int { return &v }

// readNrOpen is fs.nr_open, what nofile: unlimited becomes.
func readNrOpen(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// setupCase is a Setup and what a job reads back of it.
type setupCase struct {
	name   string
	setup  *Setup
	script string
	want   []string
}

// bothStarts is cases, then each case whose Setup is started traced
// again, through the exec shim ("NAME, shim"): the shim is what a
// process that may not trace its runs falls back to.
func bothStarts[T any](cases []T, fields func(*T) (**Setup, *string)) []T {
	out := slices.Clone(cases)
	for _, c := range cases {
		p, name := fields(&c)
		if !(*p).traced() {
			continue
		}
		shimmed := **p
		shimmed.viaShim = true
		*p, *name = &shimmed, *name+", shim"
		out = append(out, c)
	}
	return out
}

// TestSetupApplied starts real runs, traced and through the exec shim,
// and reads each setting back from inside the job, as a process it forks
// (cut, cat, ionice) sees it: the settings are inherited.
func TestSetupApplied(t *testing.T) {
	t.Parallel()
	all := &Setup{Nice: intp(10), IOPrio: &IOPrio{IOPrioIdle, 0}, OOMScoreAdj: intp(500),
		Rlimits: []Rlimit{{unix.RLIMIT_NOFILE, 1024}}}
	tests := []setupCase{
		{"nice", &Setup{Nice: intp(10)}, "cut -d' ' -f19 /proc/self/stat", []string{"10"}},
		{"a negative nice", &Setup{Nice: intp(-5)}, "cut -d' ' -f19 /proc/self/stat", []string{"-5"}},
		{"ionice idle", &Setup{IOPrio: &IOPrio{IOPrioIdle, 0}}, "ionice -p $$", []string{"idle"}},
		{"ionice best-effort", &Setup{IOPrio: &IOPrio{IOPrioBestEffort, 7}}, "ionice -p $$", []string{"best-effort: prio 7"}},
		{"ionice realtime", &Setup{IOPrio: &IOPrio{IOPrioRealtime, 3}}, "ionice -p $$", []string{"realtime: prio 3"}},
		{"oom_score_adj", &Setup{OOMScoreAdj: intp(500)}, "cat /proc/self/oom_score_adj", []string{"500"}},
		{"nofile", &Setup{Rlimits: []Rlimit{{unix.RLIMIT_NOFILE, 1024}}}, "ulimit -Sn; ulimit -Hn", []string{"1024", "1024"}},
		{"nproc", &Setup{Rlimits: []Rlimit{{unix.RLIMIT_NPROC, 300}}}, "grep 'Max processes' /proc/self/limits | awk '{print $3, $4}'", []string{"300 300"}},
		{"core", &Setup{Rlimits: []Rlimit{{unix.RLIMIT_CORE, 0}}}, "ulimit -c", []string{"0"}},
		{"core unlimited", &Setup{Rlimits: []Rlimit{{unix.RLIMIT_CORE, unix.RLIM_INFINITY}}}, "ulimit -Hc", []string{"unlimited"}},
		{"all together", all, "cut -d' ' -f19 /proc/self/stat; ionice -p $$; cat /proc/self/oom_score_adj; ulimit -n",
			[]string{"10", "idle", "500", "1024"}},
		{"the status pipe is not inherited", all, "[ -e /proc/$$/fd/3 ] && echo open || echo closed", []string{"closed"}},
		{"the process group is the run's", all, "cut -d' ' -f5 /proc/$$/stat", nil}, // want: the pid, below
	}
	for _, tt := range bothStarts(tests, func(tt *setupCase) (**Setup, *string) { return &tt.setup, &tt.name }) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			spec := testSpec(t, tt.script)
			spec.Setup, spec.OnOutput = tt.setup, rec.onOutput
			res := Run(within(t, 10*time.Second), spec)
			if res.Outcome != Exited || res.ExitCode != 0 {
				t.Fatalf("got %+v, stderr %q", res, rec.get("stderr"))
			}
			want := tt.want
			if want == nil {
				want = []string{strconv.Itoa(res.PID)}
			}
			if got := rec.get("stdout"); !slices.Equal(got, want) {
				t.Errorf("stdout %q, want %q (stderr %q)", got, want, rec.get("stderr"))
			}
		})
	}
}

// hasSysResource reports whether this process has CAP_SYS_RESOURCE,
// which lowering oom_score_adj and raising a hard limit take: root in a
// container often lacks it.
func hasSysResource(t *testing.T) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(ln, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return caps&(1<<unix.CAP_SYS_RESOURCE) != 0
		}
	}
	t.Fatal("no CapEff in /proc/self/status")
	return false
}

// TestSetupPrivileged: what takes CAP_SYS_RESOURCE is applied with it,
// and without it the run fails to start, saying which setting the kernel
// refused.
func TestSetupPrivileged(t *testing.T) {
	t.Parallel()
	privileged := hasSysResource(t)
	type privilegedCase struct {
		name, script, want, refused string
		setup                       *Setup
	}
	tests := []privilegedCase{
		{"a lower oom_score_adj", "cat /proc/self/oom_score_adj", "-100", "oom_score_adj -100",
			&Setup{OOMScoreAdj: intp(-100)}},
		{"nofile unlimited is fs.nr_open", "ulimit -n", readNrOpen(t), "rlimit 7 to " + readNrOpen(t),
			&Setup{Rlimits: []Rlimit{{unix.RLIMIT_NOFILE, unix.RLIM_INFINITY}}}},
	}
	for _, tt := range bothStarts(tests, func(tt *privilegedCase) (**Setup, *string) { return &tt.setup, &tt.name }) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			spec := testSpec(t, tt.script)
			spec.Setup, spec.OnOutput = tt.setup, rec.onOutput
			res := Run(within(t, 10*time.Second), spec)
			switch {
			case privileged && (res.Outcome != Exited || !slices.Equal(rec.get("stdout"), []string{tt.want})):
				t.Errorf("with CAP_SYS_RESOURCE: got %+v, stdout %q, want %q", res, rec.get("stdout"), tt.want)
			case !privileged && (res.Outcome != StartFailed || !errors.Is(res.Err, fs.ErrPermission) || !strings.Contains(res.Err.Error(), tt.refused)):
				t.Errorf("without CAP_SYS_RESOURCE: got %+v, want start_failed naming %q", res, tt.refused)
			}
		})
	}
}

// TestSetupKeepsTheRun: the job execs in the shim's process, with the
// environment it was given, unchanged, and as the run's user, in its dir.
func TestSetupKeepsTheRun(t *testing.T) {
	t.Parallel()
	var rec recorder
	spec := testSpec(t, "echo $$; env; id -u; id -g; pwd; cut -d' ' -f19 /proc/self/stat")
	spec.Setup, spec.OnOutput = &Setup{Nice: intp(-3)}, rec.onOutput
	spec.Credential = &syscall.Credential{Uid: nobodyID, Gid: nobodyID}
	spec.Dir = "/"
	res := Run(within(t, 10*time.Second), spec)
	if res.Outcome != Exited || res.ExitCode != 0 {
		t.Fatalf("got %+v, stderr %q", res, rec.get("stderr"))
	}
	out := rec.get("stdout")
	if len(out) < 6 || out[0] != strconv.Itoa(res.PID) {
		t.Fatalf("stdout %q: want the run's pid %d first", out, res.PID)
	}
	env, tail := out[1:len(out)-4], out[len(out)-4:]
	id := strconv.Itoa(nobodyID)
	if want := []string{id, id, "/", "-3"}; !slices.Equal(tail, want) {
		t.Errorf("uid, gid, dir, nice: %q, want %q", tail, want)
	}
	// sh adds PWD (and keeps what it inherited); nothing else may differ.
	got := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "PWD=") })
	want := slices.DeleteFunc(slices.Clone(spec.Env), func(kv string) bool { return strings.HasPrefix(kv, "PWD=") })
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("environment differs from the spec's:\ngot  %q\nwant %q", got, want)
	}
}

// TestSetupStartFailed: a job that cannot be exec'd, or a setting the
// kernel refuses, is a run that did not start, traced or through the
// shim, as without a Setup.
func TestSetupStartFailed(t *testing.T) {
	t.Parallel()
	noexec := t.TempDir() + "/noexec"
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nrOpen, _ := strconv.ParseUint(readNrOpen(t), 10, 64)
	type failedCase struct {
		name  string
		argv  []string
		setup *Setup
		code  int
		is    error
		msg   string
	}
	tests := []failedCase{
		{"missing command", []string{"/nonexistent/job"}, &Setup{Nice: intp(1)}, ExitNotFound, fs.ErrNotExist, "exec /nonexistent/job"},
		{"not executable", []string{noexec}, &Setup{Nice: intp(1)}, ExitNotExecutable, fs.ErrPermission, "exec " + noexec},
		{"a refused rlimit", []string{"/bin/true"}, &Setup{Rlimits: []Rlimit{{unix.RLIMIT_NOFILE, nrOpen + 1}}}, ExitNotExecutable, fs.ErrPermission, "rlimit 7"},
	}
	for _, tt := range bothStarts(tests, func(tt *failedCase) (**Setup, *string) { return &tt.setup, &tt.name }) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := testSpec(t, "")
			spec.Argv, spec.Setup = tt.argv, tt.setup
			started := false
			spec.OnStart = func(int) { started = true }
			res := Run(within(t, 10*time.Second), spec)
			if res.Outcome != StartFailed || res.ExitCode != tt.code || !errors.Is(res.Err, tt.is) {
				t.Fatalf("got %+v, want start_failed, code %d, an error that is %v", res, tt.code, tt.is)
			}
			if !strings.Contains(res.Err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", res.Err, tt.msg)
			}
			if started {
				t.Error("OnStart was called for a run that did not start")
			}
		})
	}
}

// TestSetupArgs: what the supervisor writes on the shim's command line is
// what the shim reads back; without a Setup the command is left alone.
func TestSetupArgs(t *testing.T) {
	cred := &syscall.Credential{Uid: 7, Gid: 8, Groups: []uint32{9, 10}}
	kept := &syscall.Credential{Uid: 7, Gid: 8, NoSetGroups: true}
	tests := []struct {
		name  string
		setup Setup
		cred  *syscall.Credential
	}{
		{"one key", Setup{Nice: intp(-20)}, nil},
		{"everything", Setup{Nice: intp(0), IOPrio: &IOPrio{IOPrioBestEffort, 4}, OOMScoreAdj: intp(-1000),
			Rlimits: []Rlimit{{unix.RLIMIT_NOFILE, 64}, {unix.RLIMIT_CORE, unix.RLIM_INFINITY}}}, cred},
		{"a non-root supervisor's credential", Setup{OOMScoreAdj: intp(3)}, kept},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv := []string{"sh", "-c", "echo -nice 1 -- x"}
			args := shimArgs(&tt.setup, tt.cred, "/srv", 4, "/bin/sh", argv)
			f, err := parseSetupFlags(args[1:])
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f.setup, tt.setup) || !reflect.DeepEqual(f.cred, tt.cred) {
				t.Errorf("read back %+v %+v, want %+v %+v", f.setup, f.cred, tt.setup, tt.cred)
			}
			if f.status != 4 || f.dir != "/srv" || f.path != "/bin/sh" || !slices.Equal(f.argv, argv) {
				t.Errorf("read back status %d dir %q path %q argv %q", f.status, f.dir, f.path, f.argv)
			}
		})
	}
	cmd := &exec.Cmd{Path: "/bin/true", Args: []string{"true"}}
	if s, err := shim(cmd, nil); s != nil || err != nil || cmd.Path != "/bin/true" || len(cmd.ExtraFiles) != 0 {
		t.Errorf("without a Setup: %v %v %+v, want the command untouched", s, err, cmd)
	}
}

// BenchmarkRunSetup is the exec shim's cost on a short run: a run of
// /bin/true with nice 10 against one without, in the same run. Besides
// ns/op (the whole run), it reports start-µs, from Run's call to the
// job's exec (OnStart: for the shim, once its exec of the job closed the
// status pipe), and the CPU of this process and of its children per run.
func BenchmarkRunSetup(b *testing.B) {
	for _, tc := range []struct {
		name  string
		setup *Setup
	}{
		{"plain", nil},
		{"nice10", &Setup{Nice: intp(10)}},                             // on the forking thread
		{"oom500", &Setup{OOMScoreAdj: intp(500)}},                     // traced: stopped at its exec
		{"oom500-shim", &Setup{OOMScoreAdj: intp(500), viaShim: true}}, // through the exec shim
	} {
		b.Run(tc.name, func(b *testing.B) {
			var begun time.Time
			var start time.Duration
			spec := Spec{Argv: []string{"/bin/true"}, Tag: "CRONVISOR_RUN_ID=bench-" + strconv.Itoa(os.Getpid()),
				OnStart: func(int) { start += time.Since(begun) }, Setup: tc.setup}
			self0, kids0 := cpuTimes(b)
			for b.Loop() {
				begun = time.Now()
				if res := Run(context.Background(), spec); res.ExitCode != 0 {
					b.Fatalf("%+v", res)
				}
			}
			self1, kids1 := cpuTimes(b)
			n := float64(b.N)
			b.ReportMetric(float64(start.Microseconds())/n, "start-µs")
			b.ReportMetric(float64((self1-self0).Microseconds())/n, "cpu-self-µs")
			b.ReportMetric(float64((kids1-kids0).Microseconds())/n, "cpu-children-µs")
		})
	}
}

// cpuTimes is the user and system CPU of this process and of its reaped
// children.
func cpuTimes(b *testing.B) (self, children time.Duration) {
	var s, c unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &s) != nil || unix.Getrusage(unix.RUSAGE_CHILDREN, &c) != nil {
		b.Fatal("getrusage")
	}
	tv := func(r unix.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return tv(s), tv(c)
}

// TestPrioritiesOnAThreadStayThere: a run's nice value and I/O priority,
// given to the thread that forks it (no shim), reach the run as another
// user too, and never the supervisor: after such runs every thread of
// this process has its own priorities still.
func TestPrioritiesOnAThreadStayThere(t *testing.T) {
	t.Parallel()
	setup := &Setup{Nice: intp(7), IOPrio: &IOPrio{IOPrioBestEffort, 6}}
	if !setup.onThread() {
		t.Fatal("a nice value and an I/O priority alone want no shim")
	}
	for i := range 20 {
		var rec recorder
		spec := testSpec(t, "cut -d' ' -f19 /proc/self/stat; ionice -p $$")
		spec.Setup, spec.OnOutput = setup, rec.onOutput
		if i%2 == 1 && os.Geteuid() == 0 {
			spec.Credential = &syscall.Credential{Uid: nobodyID, Gid: nobodyID}
		}
		res := Run(within(t, 10*time.Second), spec)
		if want := []string{"7", "best-effort: prio 6"}; res.ExitCode != 0 || !slices.Equal(rec.get("stdout"), want) {
			t.Fatalf("run %d: %+v, stdout %q, want %q (stderr %q)", i, res, rec.get("stdout"), want, rec.get("stderr"))
		}
	}
	// A thread ends a moment after its goroutine: wait for that, no more.
	var niced []string
	testlog.Poll(2*time.Second, func() bool { niced = nicedThreads(t); return len(niced) == 0 })
	if len(niced) > 0 {
		t.Errorf("threads of the supervisor with a nice value not 0: %v", niced)
	}
}

// nicedThreads lists this process's threads whose nice value is not 0,
// as "TID:NICE".
func nicedThreads(t *testing.T) []string {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		prio, err := unix.Getpriority(unix.PRIO_PROCESS, atoi(t, task.Name()))
		if err != nil {
			continue // the thread ended meanwhile
		}
		if nice := 20 - prio; nice != 0 { // the raw system call's value is 20 - nice
			out = append(out, task.Name()+":"+strconv.Itoa(nice))
		}
	}
	return out
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
