package config

import (
	"strings"
	"testing"

	"cronvisor/lock/backends"
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
