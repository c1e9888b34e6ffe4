package cgroup

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/harness/testlog"
)

// intoSub is a script that makes the cgroup sub/deeper under leaf and
// moves itself into it, as a root job can, then runs then.
func intoSub(leaf, then string) string {
	sub := filepath.Join(leaf, "sub", "deeper")
	return "mkdir -p " + sub + " && echo $$ > " + sub + "/cgroup.procs && " + then
}

// TestLeafWithSubCgroups: a process that moved itself into a cgroup it
// made below its leaf is still the leaf's: listed, signalled, killed,
// counted in populated, and the leaf is removed whole once it is gone.
func TestLeafWithSubCgroups(t *testing.T) {
	for _, tc := range []struct {
		name string
		trap string // the sleeper's shell ignores SIGTERM
		end  func(l *Leaf) error
	}{
		{name: "SIGTERM", end: func(l *Leaf) error { return l.Signal(syscall.SIGTERM) }},
		{name: "cgroup.kill", trap: "trap '' TERM; ", end: (*Leaf).Kill},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := realLeaf(t, Limits{})
			arg := "62.1" + strconv.Itoa(os.Getpid()%1000)
			cmd := startInto(t, l, tc.trap+intoSub(l.Path, "sleep "+arg+"; exit 0"))
			defer func() { _ = l.Kill(); _ = cmd.Wait() }()
			deeper := filepath.Join(l.Path, "sub", "deeper")
			testlog.Eventually(t, 5*time.Second, "two processes in the deeper cgroup", func() bool { p, _ := readProcs(deeper); return len(p) == 2 })
			procs, err := l.Procs()
			if err != nil || !slices.Contains(procs, cmd.Process.Pid) {
				t.Fatalf("leaf's procs %v (%v), want the shell %d that moved to %s", procs, err, cmd.Process.Pid, deeper)
			}
			if where, err := Of(cmd.Process.Pid); err != nil || !strings.HasSuffix(where, "/sub/deeper") {
				t.Fatalf("Of(%d) = %q, %v; want .../sub/deeper", cmd.Process.Pid, where, err)
			}
			if full, err := l.Populated(); err != nil || !full {
				t.Fatalf("populated = %v, %v; want true (the sub-cgroup's processes count)", full, err)
			}
			if err := l.Remove(); err == nil || !strings.Contains(err.Error(), deeper) {
				t.Fatalf("Remove of a populated leaf = %v, want an error naming %s", err, deeper)
			}
			must(t, tc.end(l))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			must(t, l.WaitEmpty(ctx))
			if left := withArg(arg); len(left) > 0 {
				t.Fatalf("processes %v of the sub-cgroup outlived the leaf's end", left)
			}
			must(t, l.Remove())
			if _, err := os.Stat(l.Path); !os.IsNotExist(err) {
				t.Fatalf("leaf %s still there after Remove: %v", l.Path, err)
			}
		})
	}
}

// TestCreateReusesALeftLeafWithSubCgroups: a leaf of the same name left
// empty with sub-cgroups (an earlier attempt) is removed whole and made
// anew.
func TestCreateReusesALeftLeafWithSubCgroups(t *testing.T) {
	h, err := Detect()
	if err != nil {
		t.Fatalf("this host's cgroup v2 hierarchy must be usable (tests run as root): %v", err)
	}
	name := "test-" + strconv.Itoa(os.Getpid()) + "-reuse"
	must(t, os.MkdirAll(filepath.Join(h.Root, name, "a", "b"), 0o755))
	l, err := h.Create(name, Limits{})
	if err != nil {
		t.Fatalf("Create over a left leaf with sub-cgroups: %v", err)
	}
	defer func() { must(t, l.Remove()) }()
	if _, err := os.Stat(filepath.Join(l.Path, "a")); !os.IsNotExist(err) {
		t.Fatalf("the left sub-cgroup is still there: %v", err)
	}
}

func TestOfThisProcess(t *testing.T) {
	b, err := os.ReadFile("/proc/self/cgroup")
	must(t, err)
	want, _ := ownCgroup(string(b))
	if got, err := Of(os.Getpid()); err != nil || got != want {
		t.Fatalf("Of(self) = %q, %v; want %q", got, err, want)
	}
	if _, err := Of(1 << 30); err == nil {
		t.Fatal("Of of no process: no error")
	}
}
