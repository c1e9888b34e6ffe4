package statedir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileAtomicReplacesByRename: the new content arrives whole under
// the name, with the mode asked for, while a reader that opened the old
// file still reads the old content (a rename, not a write in place), and
// no temporary file is left beside it.
func TestWriteFileAtomicReplacesByRename(t *testing.T) {
	for _, sync := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "paused.json")
		if err := WriteFileAtomic(path, []byte("old\n"), 0o600, sync); err != nil {
			t.Fatal(err)
		}
		old, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer old.Close()
		if err := WriteFileAtomic(path, []byte("new\n"), 0o640, sync); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != "new\n" {
			t.Errorf("sync=%v: read %q, %v; want %q", sync, got, err, "new\n")
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("sync=%v: mode %v, %v; want 0640", sync, fi.Mode().Perm(), err)
		}
		buf := make([]byte, 16)
		if n, _ := old.ReadAt(buf, 0); string(buf[:n]) != "old\n" {
			t.Errorf("sync=%v: the old file reads %q; want it untouched", sync, buf[:n])
		}
		if names, _ := filepath.Glob(filepath.Join(dir, "*")); len(names) != 1 {
			t.Errorf("sync=%v: dir holds %v; want the file alone", sync, names)
		}
	}
}

// TestWriteFileAtomicLeavesNothingOnFailure: a rename that cannot happen
// (a directory in the way) leaves the directory as it was.
func TestWriteFileAtomicLeavesNothingOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "taken")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "inside"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("x"), 0o600, true); err == nil {
		t.Fatal("WriteFileAtomic over a non-empty directory succeeded")
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("dir holds %d entries after the failure; want the directory alone", len(names))
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600, false); err == nil {
		t.Error("WriteFileAtomic into a missing directory succeeded")
	}
}
