package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestCappedLogRotatesAtItsCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cronvisor.log")
	if err := os.WriteFile(path, bytes.Repeat([]byte("o"), 60), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := openCappedLog(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	line := append(bytes.Repeat([]byte("x"), 29), '\n') // 30 bytes
	for range 10 {
		if _, err := l.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// 60 existing + 30 fits; then 3 lines per file of at most 100 bytes.
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path + ".1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cur) > 100 || len(old) > 100 {
		t.Errorf("log %d bytes, old log %d bytes; want both at most the cap of 100", len(cur), len(old))
	}
	if len(cur)%30 != 0 || len(cur) == 0 || !bytes.HasSuffix(cur, line) {
		t.Errorf("log %q: want whole lines, the last one written at the end", cur)
	}
	if !bytes.Equal(old, bytes.Repeat(line, 3)) {
		t.Errorf("old log %q, want the three lines before the current file's", old)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 2 {
		t.Errorf("%d files in the dir, want the log and one old log", len(entries))
	}
}
