package statedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// nobody owns the paths that play another user's.
const nobody = 65534

// needRoot fails, not skips: CI runs as root, and the owner rule cannot be
// exercised without chown.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test chowns files to another user and must run as root (CI does)")
	}
}

// tree is a state dir laid out as a running daemon leaves it.
func tree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	mustDo(t, os.MkdirAll(Dir(dir).Locks(), 0o700))
	for _, f := range []string{"locks/a.lock", "cronvisor.sock.lock"} {
		mustDo(t, os.WriteFile(filepath.Join(dir, f), nil, 0o600))
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	mustDo(t, err)
	defer unix.Close(fd)
	mustDo(t, unix.Bind(fd, &unix.SockaddrUnix{Name: Dir(dir).Socket()}))
	mustDo(t, os.Chmod(Dir(dir).Socket(), 0o600))
	return dir
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheck(t *testing.T) {
	needRoot(t)
	chmod := func(name string, mode os.FileMode) func(*testing.T, string) string {
		return func(t *testing.T, dir string) string {
			p := filepath.Join(dir, name)
			mustDo(t, os.Chmod(p, mode))
			return p
		}
	}
	chown := func(name string) func(*testing.T, string) string {
		return func(t *testing.T, dir string) string {
			p := filepath.Join(dir, name)
			mustDo(t, os.Lchown(p, nobody, nobody))
			return p
		}
	}
	tests := []struct {
		name    string
		spoil   func(t *testing.T, dir string) string // returns the path to be named, "" for none
		wantWhy string
		wantMod string
	}{
		{"a tree cronvisor made passes", func(*testing.T, string) string { return "" }, "", ""},
		{"state dir writable by others", chmod(".", 0o777), "writable by others", "drwxrwxrwx"},
		{"state dir writable by its group", chmod(".", 0o770), "writable by its group", "drwxrwx---"},
		{"sticky world-writable locks dir", chmod("locks", 0o777|os.ModeSticky), "writable by others", "dtrwxrwxrwx"},
		{"locks dir of another user", chown("locks"), "owned by another user", "drwx------"},
		{"lock file of another user", chown("locks/a.lock"), "owned by another user", "-rw-------"},
		{"lock file writable by others", chmod("locks/a.lock", 0o666), "writable by others", "-rw-rw-rw-"},
		{"socket of another user", chown("cronvisor.sock"), "owned by another user", "Srw-------"},
		{"socket lock of another user", chown("cronvisor.sock.lock"), "owned by another user", "-rw-------"},
		{"socket lock writable by its group", chmod("cronvisor.sock.lock", 0o660), "writable by its group", "-rw-rw----"},
		{"history of another user", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "history.db")
			mustDo(t, os.WriteFile(p, nil, 0o600))
			mustDo(t, os.Chown(p, nobody, nobody))
			return p
		}, "owned by another user", "-rw-------"},
		{"symlink planted by another user", func(t *testing.T, dir string) string {
			p := Dir(dir).LockFile("b")
			mustDo(t, os.Symlink("/etc/passwd", p))
			mustDo(t, os.Lchown(p, nobody, nobody))
			return p
		}, "owned by another user", "Lrwxrwxrwx"},
		{"own symlink is left to the lock's O_NOFOLLOW", func(t *testing.T, dir string) string {
			mustDo(t, os.Symlink("/etc/passwd", Dir(dir).LockFile("b")))
			return ""
		}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t)
			path := tt.spoil(t, dir)
			err := Check(dir)
			if path == "" {
				if err != nil {
					t.Fatalf("Check: %v, want nil", err)
				}
				return
			}
			var bad *UnsafeError
			if !errors.As(err, &bad) {
				t.Fatalf("Check: %v, want an UnsafeError", err)
			}
			if bad.Path != filepath.Clean(path) || bad.Why != tt.wantWhy || bad.Mode.String() != tt.wantMod {
				t.Errorf("got %s %q %s, want %s %q %s", bad.Path, bad.Why, bad.Mode, path, tt.wantWhy, tt.wantMod)
			}
			for _, want := range []string{filepath.Clean(path), tt.wantWhy, tt.wantMod, "uid "} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not name %q", err, want)
				}
			}
		})
	}
}

func TestCheckSymlinkedStateDir(t *testing.T) {
	needRoot(t)
	target := filepath.Join(t.TempDir(), "elsewhere")
	mustDo(t, os.Mkdir(target, 0o700))
	link := filepath.Join(t.TempDir(), "state")
	mustDo(t, os.Symlink(target, link))
	if err := Check(link); err != nil {
		t.Fatalf("own symlinked state dir: %v", err)
	}
	mustDo(t, os.Chown(target, nobody, nobody))
	var bad *UnsafeError
	if err := Check(link); !errors.As(err, &bad) || bad.UID != nobody {
		t.Fatalf("symlinked state dir of another user: %v, want it refused", err)
	}
	mustDo(t, os.Remove(target))
	if err := Check(link); err != nil {
		t.Fatalf("dangling state dir symlink: %v, want nil (nothing there yet)", err)
	}
}

func TestCheckFollowsEntriesOfTheStateDir(t *testing.T) {
	needRoot(t)
	dir := tree(t)
	elsewhere := filepath.Join(t.TempDir(), "history.db")
	mustDo(t, os.WriteFile(elsewhere, nil, 0o666))
	mustDo(t, os.Chmod(elsewhere, 0o666))
	mustDo(t, os.Symlink(elsewhere, filepath.Join(dir, "history.db")))
	var bad *UnsafeError
	if err := Check(dir); !errors.As(err, &bad) || bad.Why != "writable by others" {
		t.Fatalf("history.db symlinked to a world-writable file: %v, want refused", err)
	}
}

func TestCheckStateDirThatIsAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "state")
	mustDo(t, os.WriteFile(f, nil, 0o600))
	if err := Check(f); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("Check on a file: %v", err)
	}
}

func TestCheckReportsEveryProblem(t *testing.T) {
	needRoot(t)
	dir := tree(t)
	mustDo(t, os.Chmod(Dir(dir).Locks(), 0o777))
	mustDo(t, os.Chown(Dir(dir).SocketLock(), nobody, nobody))
	err := Check(dir)
	for _, want := range []string{Dir(dir).Locks(), Dir(dir).SocketLock()} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check: %v; want it to name %s", err, want)
		}
	}
}

func TestCheckOnlyNamedLocks(t *testing.T) {
	needRoot(t)
	dir := tree(t)
	other := Dir(dir).LockFile("other")
	mustDo(t, os.WriteFile(other, nil, 0o666))
	mustDo(t, os.Chmod(other, 0o666))
	if err := Check(dir, "a"); err != nil {
		t.Errorf("Check for lock a: %v; want other.lock left to its own run", err)
	}
	if err := Check(dir, "a", "other"); err == nil || !strings.Contains(err.Error(), other) {
		t.Errorf("Check for locks a and other: %v; want other.lock refused", err)
	}
	if err := Check(dir); err == nil {
		t.Error("Check of every lock passed a world-writable lock file")
	}
}

func TestCheckMissingIsFine(t *testing.T) {
	if err := Check(filepath.Join(t.TempDir(), "not-yet")); err != nil {
		t.Fatalf("a state dir not created yet: %v", err)
	}
}

// TestCheckAsAnotherUser asks the rule on behalf of a uid that owns
// nothing here, which needs no root: root's own paths still pass.
func TestCheckAsAnotherUser(t *testing.T) {
	dir := tree(t)
	err := check(dir, os.Geteuid()+1, nil)
	if os.Geteuid() == 0 {
		if err != nil {
			t.Fatalf("root-owned tree for uid 1: %v, want trusted (root excepted)", err)
		}
		return
	}
	var bad *UnsafeError
	if !errors.As(err, &bad) || bad.Why != "owned by another user" {
		t.Fatalf("check as uid %d: %v, want refused", os.Geteuid()+1, err)
	}
}
