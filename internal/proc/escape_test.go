package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// warnings collects what a run's Spec.Warn is told.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) warn(msg string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, fmt.Sprint(append([]any{msg}, args...)...))
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

// ownLeaf is a shell line setting L to the directory of the shell's own
// cgroup, as a job finds its run's leaf.
func ownLeaf(mount string) string {
	return `L=` + mount + `$(sed -n 's/^0:://p' /proc/self/cgroup); `
}

// TestRunInLeafEndsWhatLeftIt: a root job that moves itself (or a child)
// out of its run's leaf, to the root cgroup, is still ended (at its
// deadline, or with its main process) by process group and tag, and the
// move is told to Spec.Warn with the pid and where it went.
func TestRunInLeafEndsWhatLeftIt(t *testing.T) {
	t.Parallel()
	h := hierarchy(t)
	tests := []struct {
		name    string
		script  string // %s is the root cgroup's cgroup.procs, %[2]s the sleep's arg
		timeout time.Duration
		want    Outcome
	}{
		{name: "main leaves, deadline", script: `echo $$ > %s; sleep %s`, timeout: 500 * time.Millisecond, want: TimedOut},
		{name: "child leaves, main exits", script: `sh -c 'echo $$ > %s; exec sleep %s' & sleep 0.3; echo done`,
			timeout: 10 * time.Second, want: Exited},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			arg := fmt.Sprintf("63.%d%d", os.Getpid()%10000, i)
			killWithArg(t, arg)
			spec := testSpec(t, fmt.Sprintf(tt.script, filepath.Join(h.Mount, "cgroup.procs"), arg))
			spec.Cgroup, spec.KillGrace = h, time.Second
			var w warnings
			spec.Warn = w.warn
			leaf := filepath.Join(h.Root, leafName(spec.Tag)) // the shell may have left it before OnStart could look
			start := time.Now()
			res := Run(within(t, tt.timeout), spec)
			took := time.Since(start)
			if res.Outcome != tt.want || (tt.want == Exited && res.ExitCode != 0) {
				t.Fatalf("got %+v, want %s", res, tt.want)
			}
			if left := withArg(arg); len(left) > 0 {
				t.Fatalf("processes %v that left the leaf alive when Run returned", left)
			}
			if tt.want == TimedOut && took > tt.timeout+spec.KillGrace/2 {
				t.Errorf("run over %v after its start, want soon after its %v deadline (SIGTERM ends sleep)", took, tt.timeout)
			}
			msgs := w.all()
			if len(msgs) == 0 || !strings.Contains(msgs[0], "left its cgroup leaf") || !strings.Contains(msgs[0], "moved_to"+h.Mount) {
				t.Fatalf("warnings %q, want one that a process left the leaf for %s", msgs, h.Mount)
			}
			if _, err := os.Stat(leaf); !os.IsNotExist(err) {
				t.Errorf("leaf %s not removed: %v", leaf, err)
			}
		})
	}
}

// TestRunInLeafRemovesSubCgroups: a root job that makes cgroups below
// its run's leaf and moves into them is ended there (the sub-cgroup's
// processes are the leaf's) and the leaf is removed whole, with nothing
// to warn of.
func TestRunInLeafRemovesSubCgroups(t *testing.T) {
	t.Parallel()
	h := hierarchy(t)
	tests := []struct {
		name    string
		then    string
		timeout time.Duration
		want    Outcome
	}{
		{name: "exits", then: "exit 0", timeout: 10 * time.Second, want: Exited},
		{name: "deadline, TERM ignored", then: "trap '' TERM; while :; do sleep 0.05; done", timeout: 300 * time.Millisecond, want: TimedOut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			script := ownLeaf(h.Mount) + `mkdir -p $L/sub/deeper && echo $$ > $L/sub/deeper/cgroup.procs && ` + tt.then
			spec := testSpec(t, script)
			spec.Cgroup, spec.KillGrace = h, 200*time.Millisecond
			var w warnings
			spec.Warn = w.warn
			leaf := filepath.Join(h.Root, leafName(spec.Tag))
			res := Run(within(t, tt.timeout), spec)
			if res.Outcome != tt.want || res.Err != nil && tt.want == Exited {
				t.Fatalf("got %+v, want %s", res, tt.want)
			}
			if _, err := os.Stat(leaf); !os.IsNotExist(err) {
				t.Fatalf("leaf %s with sub-cgroups not removed: %v", leaf, err)
			}
			if msgs := w.all(); len(msgs) > 0 {
				t.Errorf("warnings %q, want none", msgs)
			}
		})
	}
}
