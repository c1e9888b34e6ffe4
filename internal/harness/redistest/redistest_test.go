package redistest

import (
	"strings"
	"testing"
)

func TestServerStopStart(t *testing.T) {
	s := New(t)
	if !strings.HasPrefix(s.URL(), "redis://127.0.0.1:") {
		t.Fatalf("URL() = %q, want a loopback redis:// URL", s.URL())
	}
	addr := s.Addr()
	steps := []struct {
		name string
		act  func()
		up   bool
	}{
		{"started", func() {}, true},
		{"stopped", s.Stop, false},
		{"stopped twice", s.Stop, false},
		{"restarted", s.Start, true},
		{"started twice", s.Start, true},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.act()
			if s.Addr() != addr {
				t.Fatalf("address changed from %s to %s", addr, s.Addr())
			}
			if err := ping(addr); (err == nil) != st.up {
				t.Fatalf("ping %s: %v, want up=%v", addr, err, st.up)
			}
		})
	}
}
