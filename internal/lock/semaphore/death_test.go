package semaphore

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
)

// A file slot is held by the run's processes that inherited it: after
// the supervisor's release it stays held while they live, and is free
// the moment the last one is killed.
func TestFileSlotFreedWithItsLastProcess(t *testing.T) {
	ctx := locktest.Context(t, 20*time.Second)
	dir := t.TempDir()
	open := opener(t, file.Backend, lock.Settings{LocksDir: filepath.Join(dir, "locks"), InRun: locktest.InRun})
	a, b := open(map[string]int{"db": 1}), open(map[string]int{"db": 1})
	h, err := a.Take(ctx, req("runner", "db", 1))
	if err != nil {
		t.Fatal(err)
	}
	files := h.Files()
	if len(files) != 1 || files[0] != h.Grants[0].File {
		t.Fatalf("Files() = %v, want the slot's file", files)
	}
	cmd := exec.Command("sleep", "60")
	cmd.ExtraFiles = files // fd 3 here; the runner puts slots at 5 on
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locktest.KillGroup(cmd.Process.Pid); _ = cmd.Wait() })
	if err := a.Release(h); err != nil {
		t.Fatal(err)
	}
	_, err = b.Take(ctx, req("next", "db", 1))
	mustBeFull(t, err, "db", "runner")

	locktest.KillGroup(cmd.Process.Pid)
	_ = cmd.Wait()
	if _, err := b.Take(ctx, req("next", "db", 1)); err != nil {
		t.Fatalf("the slot is still held after its last process died: %v", err)
	}
	checkMode(t, filepath.Join(dir, "resources"), os.ModeDir|0o700)
	checkMode(t, filepath.Join(dir, "resources", "db.0.lock"), 0o600)
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	if fi, err := os.Lstat(path); err != nil || fi.Mode() != want {
		t.Errorf("%s: %v, %v; want mode %v", path, fi, err, want)
	}
}
