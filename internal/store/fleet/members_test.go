package fleet

import (
	"slices"
	"testing"
	"time"
)

// TestMembersPublishAndRead: each host publishes its job digests and reads
// the others'; a change is read again, an unchanged set from the cache.
func TestMembersPublishAndRead(t *testing.T) {
	url, db := newDB(t)
	a, b := openStore(t, url, "host-a"), openStore(t, url, "host-b")
	started := time.Now().Round(time.Microsecond)
	for _, s := range []*Store{a, b} {
		if _, _, err := s.Beat(t.Context(), "v", 7, started); err != nil {
			t.Fatal(err)
		}
	}
	ma, mb := NewMembers(a), NewMembers(b)
	byHost := func(ms []Member) map[string]Member {
		out := map[string]Member{}
		for _, m := range ms {
			out[m.Host] = m
		}
		return out
	}
	if _, err := ma.Read(t.Context(), []uint64{3, 1, 2}); err != nil {
		t.Fatal(err)
	}
	for round, want := range [][]uint64{{1, 2, 3}, {1, 2, 3}, {1, 4}} {
		if round == 2 {
			if _, err := ma.Read(t.Context(), []uint64{4, 1}); err != nil {
				t.Fatal(err)
			}
		}
		ms, err := mb.Read(t.Context(), []uint64{9})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got := byHost(ms)
		ja := slices.Sorted(slices.Values(got["host-a"].Jobs))
		if !slices.Equal(ja, want) || !slices.Equal(got["host-b"].Jobs, []uint64{9}) {
			t.Errorf("round %d: host-a's digests %v, host-b's %v; want %v and [9]", round, ja, got["host-b"].Jobs, want)
		}
		if m := got["host-a"]; m.PID != 7 || !m.Started.Equal(started) || m.Stopped || m.Silent > 5*time.Second {
			t.Errorf("round %d: host-a read as %+v", round, m)
		}
	}
	var text string
	if err := db.QueryRowContext(t.Context(), `SELECT job_digests FROM cronvisor_hosts WHERE host = 'host-a'`).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != "1,4" {
		t.Errorf("host-a's row has digests %q, want \"1,4\"", text)
	}
}
