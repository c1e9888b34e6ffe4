package cgroup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/harness/testlog"
)

func TestDetect(t *testing.T) {
	cases := []struct {
		name       string
		mountinfo  string // %s is the fake mount
		self       string
		wantErr    string
		wantRoot   string // relative to the mount
		wantEnable bool   // the offered controllers enabled in Root
	}{
		{name: "no cgroup2 mount", mountinfo: "22 1 0:21 / /sys rw - sysfs sysfs rw\n", self: "0::/\n", wantErr: "no cgroup2"},
		{name: "no 0:: line", mountinfo: "40 30 0:37 / %s rw - cgroup2 cgroup2 rw\n", self: "9:pids:/\n", wantErr: "no 0::"},
		{name: "root cgroup", mountinfo: "40 30 0:37 / %s rw,relatime - cgroup2 cgroup2 rw\n", self: "9:pids:/\n0::/\n",
			wantRoot: SubtreeName, wantEnable: true},
		{name: "DelegateSubgroup=supervisor", mountinfo: "40 30 0:37 / %s rw - cgroup2 cgroup2 rw\n",
			self: "0::/system.slice/cronvisor.service/supervisor\n", wantRoot: "system.slice/cronvisor.service", wantEnable: true},
		{name: "Delegate=yes alone", mountinfo: "40 30 0:37 / %s rw - cgroup2 cgroup2 rw\n",
			self: "0::/system.slice/cronvisor.service\n", wantRoot: "system.slice/cronvisor.service"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mount := t.TempDir()
			root := filepath.Join(mount, c.wantRoot)
			must(t, os.MkdirAll(root, 0o755))
			must(t, os.WriteFile(filepath.Join(root, "cgroup.kill"), nil, 0o644))
			must(t, os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("pids\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), nil, 0o644))
			mi := strings.ReplaceAll(c.mountinfo, "%s", mount)
			h, err := detect(strings.NewReader(mi), c.self)
			if c.wantErr != "" {
				if err == nil || !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want ErrUnusable saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Mount != mount || h.Root != root {
				t.Fatalf("mount %s root %s, want %s and %s", h.Mount, h.Root, mount, root)
			}
			// The fake subtree_control keeps what was written: "+pids".
			if enabled := slices.Equal(h.Controllers, []string{"+pids"}); enabled != c.wantEnable {
				t.Fatalf("controllers %q, want enabled %v", h.Controllers, c.wantEnable)
			}
		})
	}
}

func TestFindMountUnescapes(t *testing.T) {
	got, err := findMount(strings.NewReader(`40 30 0:37 / /a\040b rw - cgroup2 cgroup2 rw` + "\n"))
	if err != nil || got != "/a b" {
		t.Fatalf("findMount = %q, %v; want \"/a b\"", got, err)
	}
}

// realLeaf is a leaf of this host's hierarchy, removed (killed first if
// need be) when the test ends.
func realLeaf(t *testing.T, lim Limits) *Leaf {
	t.Helper()
	h, err := Detect()
	if err != nil {
		t.Fatalf("this host's cgroup v2 hierarchy must be usable (tests run as root): %v", err)
	}
	l, err := h.Create("test-"+strconv.Itoa(os.Getpid())+"-"+strings.ReplaceAll(t.Name(), "/", "-"), lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = l.Kill()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = l.WaitEmpty(ctx)
		if err := l.Remove(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// startInto starts sh -c script into l, its own process group.
func startInto(t *testing.T, l *Leaf, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	l.SysProcAttr(cmd.SysProcAttr)
	must(t, cmd.Start())
	return cmd
}

func TestKillEndsEscapee(t *testing.T) {
	l := realLeaf(t, Limits{})
	arg := "60.0" + strconv.Itoa(os.Getpid()%1000)
	// The escapee clears its environment, leaves the group and the
	// session: only the cgroup still knows it.
	cmd := startInto(t, l, "setsid env -i sleep "+arg+" </dev/null >/dev/null 2>&1 & exec sleep "+arg)
	testlog.Eventually(t, 5*time.Second, "the run and its escapee started", func() bool { return len(withArg(arg)) == 2 })
	procs, err := l.Procs()
	if err != nil || !slices.Contains(procs, cmd.Process.Pid) || len(procs) != 2 {
		t.Fatalf("leaf's procs %v (%v), want the main %d and the escapee", procs, err, cmd.Process.Pid)
	}
	must(t, l.Kill())
	_ = cmd.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	must(t, l.WaitEmpty(ctx))
	if left := withArg(arg); len(left) > 0 {
		t.Fatalf("processes %v survived cgroup.kill", left)
	}
}

func TestWaitEmptyEndsWithContext(t *testing.T) {
	l := realLeaf(t, Limits{})
	cmd := startInto(t, l, "exec sleep 60")
	defer func() { _ = l.Kill(); _ = cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := l.WaitEmpty(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitEmpty on a populated leaf = %v, want DeadlineExceeded", err)
	}
	if full, err := l.Populated(); err != nil || !full {
		t.Fatalf("populated = %v, %v; want true", full, err)
	}
}

func TestUsageOfBusyChild(t *testing.T) {
	l := realLeaf(t, Limits{})
	cmd := startInto(t, l, "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	must(t, cmd.Wait())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	must(t, l.WaitEmpty(ctx))
	u, err := l.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if cpu := u.CPUUser + u.CPUSystem; cpu < 10*time.Millisecond {
		t.Fatalf("cpu of a busy child %v (user %v, system %v), want at least 10ms", cpu, u.CPUUser, u.CPUSystem)
	}
}

func TestLimitsWritten(t *testing.T) {
	all := []string{"cpu", "io", "memory", "pids"}
	cases := []struct {
		name        string
		controllers []string
		lim         Limits
		want        map[string]string
		wantErr     string
	}{
		{name: "none", lim: Limits{}, want: map[string]string{}},
		{name: "all", controllers: all,
			lim: Limits{MemoryMax: 1 << 30, MemoryHigh: 512 << 20, CPUMax: 0.5, TasksMax: 64, IOWeight: 50},
			want: map[string]string{"memory.max": "1073741824", "memory.high": "536870912",
				"cpu.max": "50000 100000", "pids.max": "64", "io.weight": "default 50"}},
		{name: "cpu over one core", controllers: all, lim: Limits{CPUMax: 2}, want: map[string]string{"cpu.max": "200000 100000"}},
		{name: "cpu floor", controllers: all, lim: Limits{CPUMax: 0.001}, want: map[string]string{"cpu.max": "1000 100000"}},
		{name: "memory not enabled", controllers: []string{"cpu", "pids"}, lim: Limits{TasksMax: 5, MemoryMax: 1 << 20},
			wantErr: "memory_max needs the memory controller"},
		{name: "pids not enabled", controllers: nil, lim: Limits{TasksMax: 5}, wantErr: "tasks_max needs the pids controller"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &Hierarchy{Root: t.TempDir(), Controllers: c.controllers}
			l, err := h.Create("run-x", c.lim)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, c.wantErr)
				}
				if _, err := os.Stat(filepath.Join(h.Root, "run-x")); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a refused leaf was left behind: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if l.FD() < 0 {
				t.Fatal("a created leaf has no descriptor")
			}
			ents, _ := os.ReadDir(l.Path)
			if len(ents) != len(c.want) {
				t.Fatalf("leaf has %d files, want %d: %v", len(ents), len(c.want), ents)
			}
			for file, want := range c.want {
				if b, err := os.ReadFile(filepath.Join(l.Path, file)); err != nil || string(b) != want {
					t.Errorf("%s = %q (%v), want %q", file, b, err, want)
				}
			}
		})
	}
}

func TestCheckWithoutHierarchy(t *testing.T) {
	if err := Check(nil, Limits{}); err != nil {
		t.Fatalf("no limits without a hierarchy: %v", err)
	}
	if err := Check(nil, Limits{IOWeight: 10}); err == nil || !strings.Contains(err.Error(), "io_weight needs a cgroup v2 leaf") {
		t.Fatalf("Check(nil, io_weight) = %v", err)
	}
}

func TestUsageRead(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"cpu.stat":      "usage_usec 3500\nuser_usec 2500\nsystem_usec 1000\nnr_periods 0\n",
		"memory.peak":   "8388608\n",
		"memory.events": "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n",
	}
	for name, body := range files {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	l, err := Open(dir)
	if err == nil || l != nil {
		t.Fatalf("Open of a directory without cgroup.events = %v, %v", l, err)
	}
	u, err := (&Leaf{Path: dir}).Usage()
	want := Usage{CPUUser: 2500 * time.Microsecond, CPUSystem: time.Millisecond, MemoryPeak: 8 << 20, OOMKilled: true}
	if err != nil || u != want {
		t.Fatalf("Usage = %+v, %v; want %+v", u, err, want)
	}
}

// TestUsageWithoutTheMemoryController: a leaf made where the memory
// controller is not enabled does not look for memory.peak (it has none),
// one made where it is does.
func TestUsageWithoutTheMemoryController(t *testing.T) {
	for _, c := range []struct {
		controllers []string
		wantPeak    int64
	}{{[]string{"cpu", "pids"}, 0}, {[]string{"cpu", "memory"}, 8 << 20}} {
		h := &Hierarchy{Root: t.TempDir(), Controllers: c.controllers}
		l, err := h.Create("run-x", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		// A plain directory stands for the leaf: its files are the
		// test's, so a memory.peak is there to be read, or not.
		must(t, os.WriteFile(filepath.Join(l.Path, "cpu.stat"), []byte("user_usec 1\nsystem_usec 2\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(l.Path, "memory.peak"), []byte("8388608\n"), 0o644))
		u, err := l.Usage()
		l.Close()
		if err != nil || u.MemoryPeak != c.wantPeak || u.CPUSystem != 2*time.Microsecond {
			t.Errorf("controllers %v: Usage = %+v, %v; want MemoryPeak %d", c.controllers, u, err, c.wantPeak)
		}
	}
}

// withArg is the pids whose command line has arg as a word.
func withArg(arg string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if slices.Contains(strings.Split(string(b), "\x00"), arg) {
			out = append(out, pid)
		}
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
