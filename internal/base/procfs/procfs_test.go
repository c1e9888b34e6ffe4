package procfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseLocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		line string
		want []Lock
	}{
		{"flock write", "1: FLOCK  ADVISORY  WRITE 12345 08:01:1234567 0 EOF",
			[]Lock{{PID: 12345, Write: true, Major: 8, Minor: 1, Ino: 1234567}}},
		{"flock read, hex device", "2: FLOCK  ADVISORY  READ 7 fe:1a:42 0 EOF",
			[]Lock{{PID: 7, Major: 0xfe, Minor: 0x1a, Ino: 42}}},
		{"owner gone", "3: FLOCK  ADVISORY  WRITE 0 00:2f:9 0 EOF",
			[]Lock{{Write: true, Major: 0, Minor: 0x2f, Ino: 9}}},
		{"waiter holds nothing", "3: -> FLOCK  ADVISORY  WRITE 99 08:01:1234567 0 EOF", nil},
		{"posix locks do not conflict with flock", "4: POSIX  ADVISORY  WRITE 12 08:01:5 0 EOF", nil},
		{"ofd lock", "5: OFDLCK ADVISORY  READ -1 08:01:5 0 EOF", nil},
		{"garbage", "6: FLOCK ADVISORY WRITE x y", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ParseLocks(strings.NewReader(tt.line + "\n"))
			if len(got) != len(tt.want) || (len(got) == 1 && got[0] != tt.want[0]) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// startSleep starts `sleep 30` with env added and f as its fd 3, killed
// and reaped when the test ends.
func startSleep(t *testing.T, env string, f *os.File) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), env)
	if f != nil {
		cmd.ExtraFiles = []*os.File{f}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func TestLookup(t *testing.T) {
	t.Parallel()
	before := time.Now()
	cmd := startSleep(t, "X=1", nil)
	p, err := Lookup(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// Started counts from whole seconds of boot time.
	if strings.Join(p.Argv, " ") != "sleep 30" || !strings.HasSuffix(p.Exe, "/sleep") ||
		p.Started.Before(before.Add(-2*time.Second)) || p.Started.After(time.Now().Add(2*time.Second)) {
		t.Errorf("Lookup = %+v, want sleep 30 started about %v", p, before)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, err := Lookup(cmd.Process.Pid); err == nil {
		t.Errorf("Lookup of a reaped pid: no error")
	}
}

func TestHasEnv(t *testing.T) {
	t.Parallel()
	pid := startSleep(t, "CRONVISOR_RUN_ID=r-42", nil).Process.Pid
	for _, tc := range []struct {
		entry string
		want  bool
	}{
		{"CRONVISOR_RUN_ID=r-42", true},
		{"CRONVISOR_RUN_ID=r-4", false}, // a prefix of the value
		{"RUN_ID=r-42", false},          // a suffix of the entry
		{"CRONVISOR_RUN_ID=r-421", false},
	} {
		if got := HasEnv(pid, []byte(tc.entry)); got != tc.want {
			t.Errorf("HasEnv(%q) = %v, want %v", tc.entry, got, tc.want)
		}
	}
}

func TestOpeners(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.lock")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	id := IDOf(fi)
	holder := startSleep(t, "X=1", f).Process.Pid
	other := startSleep(t, "X=1", nil).Process.Pid
	// A child forked meanwhile (other, or another test's) holds every
	// descriptor of this process until its exec has closed them, which
	// may end a moment after its parent's Start returned.
	var got []int
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got = Openers(id, os.Getpid())
		if (len(got) == 1 && got[0] == holder) || time.Now().After(deadline) {
			break
		}
	}
	if !HasOpen(holder, id) || HasOpen(other, id) {
		t.Errorf("HasOpen: holder %v, other %v; want true, false", HasOpen(holder, id), HasOpen(other, id))
	}
	if len(got) != 1 || got[0] != holder {
		t.Errorf("Openers = %v, want [%d] (this process excepted)", got, holder)
	}
}

func TestChildren(t *testing.T) {
	t.Parallel()
	pid := startSleep(t, "X=1", nil).Process.Pid
	kids, ok := Children(os.Getpid())
	if !ok {
		t.Skip("this kernel cannot list children (CONFIG_PROC_CHILDREN)")
	}
	found := false
	for _, k := range kids {
		found = found || k == pid
	}
	if !found {
		t.Errorf("Children = %v, want %d among them", kids, pid)
	}
}
