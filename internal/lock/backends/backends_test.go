package backends

import (
	"strings"
	"testing"

	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
)

func TestEachBackendIsListedOnceWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range All {
		if b.Name == "" || b.Open == nil {
			t.Errorf("backend %q has no name or no Open", b.Name)
		}
		if seen[b.Name] {
			t.Errorf("backend %q is listed twice", b.Name)
		}
		seen[b.Name] = true
		if (b.Address == "") != (b.Check == nil) {
			t.Errorf("backend %q: an address key %q without its check, or the reverse", b.Name, b.Address)
		}
		if got, ok := Find(b.Name); !ok || got.Name != b.Name {
			t.Errorf("Find(%q) = %q, %v", b.Name, got.Name, ok)
		}
	}
}

func TestTheDefaultOpensTheFileBackend(t *testing.T) {
	l, err := Open("", lock.Settings{LocksDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.(*file.Locker); !ok {
		t.Errorf("the default backend is %T, want *file.Locker", l)
	}
	if _, err := Open("etcd", lock.Settings{}); err == nil || !strings.Contains(err.Error(), `unknown lock backend "etcd"`) {
		t.Errorf("an unknown kind opened: %v", err)
	}
}

func TestKeepLeaseRefusesWhatNoBackendKeeps(t *testing.T) {
	for _, h := range []string{`not json`, `{"kind":"file"}`, `{"kind":"etcd"}`} {
		if kl, err := KeepLease([]byte(h)); err == nil {
			_ = kl.Release()
			t.Errorf("KeepLease(%s) took it over", h)
		}
	}
}
