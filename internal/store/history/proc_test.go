package history

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// helperEnv makes the test binary act as a helper process (see TestMain):
// another supervisor writing to the same database.
const helperEnv = "CRONVISOR_HISTORY_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode, os.Getenv("HELPER_DB"), os.Getenv("HELPER_PREFIX")))
	}
	os.Exit(m.Run())
}

// helper runs in a child process. durable: finish runs until killed,
// printing "ok ID" after each Finish returns. writer: 100 runs and 100
// skips, then exit. fsize: under a 256 KiB file size limit, write until the
// store reports an error, print it, exit 0.
func helper(mode, db, prefix string) int {
	ctx := context.Background()
	if mode == "fsize" {
		signal.Ignore(syscall.SIGXFSZ) // get EFBIG from write(2) instead of dying
		lim := syscall.Rlimit{Cur: 256 << 10, Max: 256 << 10}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			return 3
		}
	}
	s, err := Open(db)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 3
	}
	defer s.Close()
	n := map[string]int{"durable": 1 << 20, "writer": 100, "fsize": 10000}[mode]
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		r := run.Record{Job: "j-" + prefix, RunID: id, ScheduledAt: minute(i), StartedAt: minute(i),
			Host: "h", SupervisorPID: os.Getpid(), Reason: strings.Repeat("x", 2000)}
		err := s.Start(ctx, r)
		if err == nil {
			r.Outcome, r.EndedAt = run.OK, minute(i).Add(time.Second)
			err = s.Finish(ctx, r)
		}
		if err == nil && mode != "durable" {
			err = s.Skip(ctx, run.Record{Job: r.Job, RunID: id + "-skip", ScheduledAt: minute(i), Reason: r.Reason})
		}
		if err != nil {
			fmt.Println("error:", err)
			return map[bool]int{true: 0, false: 1}[mode == "fsize"]
		}
		if mode == "durable" {
			fmt.Println("ok", id)
		}
	}
	if mode == "fsize" {
		fmt.Println("no error")
		return 2
	}
	return 0
}

// startHelper starts the test binary as a helper in its own process group;
// the context's end kills the group.
func startHelper(ctx context.Context, t *testing.T, mode, db, prefix string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "HELPER_DB="+db, "HELPER_PREFIX="+prefix)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

// TestFinishSurvivesSIGKILL kills a writing supervisor at several points;
// every run whose Finish had returned must be in the reopened database.
func TestFinishSurvivesSIGKILL(t *testing.T) {
	for _, killAfter := range []int{1, 17, 150} {
		t.Run("after "+strconv.Itoa(killAfter), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			db := t.TempDir() + "/history.db"
			cmd, sc := startHelper(ctx, t, "durable", db, "r")
			var acked []string
			for sc.Scan() {
				acked = append(acked, strings.TrimPrefix(sc.Text(), "ok "))
				if len(acked) == killAfter {
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				}
			}
			if err := cmd.Wait(); err == nil || len(acked) < killAfter {
				t.Fatalf("helper: %v after %d acks; want SIGKILL after %d", err, len(acked), killAfter)
			}
			s, err := Open(db)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var check string
			if err := s.h.Load().db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
				t.Errorf("integrity_check = %q, %v", check, err)
			}
			got, err := s.Query(ctx, Filter{Outcomes: []run.Outcome{run.OK}})
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]bool{}
			for _, r := range got {
				have[r.RunID] = true
			}
			for _, id := range acked {
				if !have[id] {
					t.Errorf("run %s was acknowledged but is missing", id)
				}
			}
		})
	}
}

// TestSupervisorsShareStore runs three writer processes on one database at
// once; busy_timeout and WAL must let every write through.
func TestSupervisorsShareStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	db := t.TempDir() + "/history.db"
	var cmds []*exec.Cmd
	outs := make([][]string, 3)
	var wg sync.WaitGroup
	for i, p := range []string{"a", "b", "c"} {
		cmd, sc := startHelper(ctx, t, "writer", db, p)
		wg.Go(func() {
			for sc.Scan() {
				outs[i] = append(outs[i], sc.Text())
			}
		})
		cmds = append(cmds, cmd)
	}
	wg.Wait() // all output read before Wait closes the pipes
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer %d: %v %q", i, err, outs[i])
		}
	}
	s, err := OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []string{"a", "b", "c"} {
		got, err := s.Query(ctx, Filter{Job: "j-" + p})
		if err != nil || len(got) != 200 {
			t.Errorf("job j-%s: %d records, %v; want 200", p, len(got), err)
		}
	}
}
