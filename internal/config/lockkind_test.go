package config

import (
	"slices"
	"strings"
	"testing"

	"cronvisor/internal/lock/backends"
)

// The tests check lock_backend with the real backends, registered as the
// daemon package registers them for the program.
func init() {
	for _, b := range backends.All {
		RegisterLockBackends(b)
	}
}

func TestAnUnregisteredKindIsRefusedWithTheRegisteredOnes(t *testing.T) {
	_, ps := Parse("/j.yaml", []byte("lock_backend:\n  type: etcd\n  url: 'etcd://h'\njobs: []\n"))
	if len(ps) == 0 {
		t.Fatal("an unknown lock_backend.type was accepted")
	}
	want := `lock_backend.type: "etcd" is not one of file, redis, mysql, postgres`
	if got := ps[0].String(); !strings.Contains(got, want) {
		t.Errorf("got %q, want it to hold %q", got, want)
	}
}

// A backend added to the list must be named where `help jobs.yaml` shows
// lock_backend.type, and its address key must be one the section holds.
func TestTheReferenceNamesEveryLockBackend(t *testing.T) {
	types := strings.Split(backendRef[0].Doc, " | ")
	for _, b := range backends.All {
		if !slices.Contains(types, b.Name) {
			t.Errorf("lock_backend.type's reference %q does not name the %s backend", backendRef[0].Doc, b.Name)
		}
		if key, _ := b.AddressKey(); key != "" && !slices.Contains(backendKeys, key) {
			t.Errorf("the %s backend's address key %q is not a lock_backend key", b.Name, key)
		}
	}
	if len(types) != len(backends.All) {
		t.Errorf("lock_backend.type's reference names %d backends, the list %d", len(types), len(backends.All))
	}
}
