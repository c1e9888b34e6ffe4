package lastok

import (
	"context"
	"errors"
	"testing"
	"time"

	"cronvisor/lock"
	"cronvisor/run"
)

const (
	host = "web-1"
	pid  = 100
)

func slot(min int) time.Time { return time.Date(2026, 3, 1, 12, min, 0, 0, time.UTC) }

// store is a fake Source that counts its calls.
type store struct {
	slot  time.Time
	err   error
	calls int
}

func (s *store) lastOK(context.Context, string) (time.Time, error) {
	s.calls++
	return s.slot, s.err
}

// grant is a file grant whose lock was last held by run runID of the
// supervisor pid on h ("" runID: the lock had no record).
func grant(runID, h string, supervisor int) lock.Grant {
	g := lock.Grant{Preceded: true}
	if runID != "" {
		g.Previous = &lock.Record{Holder: run.Holder{PID: 4242, Host: h, Job: "j", RunID: runID}, SupervisorPID: supervisor}
	}
	return g
}

func TestLookup(t *testing.T) {
	redis := lock.Grant{FencingToken: 7} // reads no previous record
	for _, tc := range []struct {
		name      string
		g         lock.Grant
		want      time.Time
		fromStore bool
	}{
		{"previous holder is the memo's run", grant("r1", host, pid), slot(1), false},
		{"another run held the lock since", grant("r2", host, pid), slot(9), true},
		{"a supervisor with the same pid elsewhere", grant("r1", "web-2", pid), slot(9), true},
		{"another supervisor here", grant("r1", host, pid+1), slot(9), true},
		{"the lock had no record", grant("", "", 0), slot(9), true},
		{"backend without the previous record", redis, slot(9), true},
		{"no lock (overlap: allow)", lock.Grant{}, slot(9), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &store{slot: slot(9)}
			m := New(st.lastOK, host, pid)
			m.Remember("j", "r1", slot(1), true, grant("r0", host, pid))
			got, known := m.Lookup(context.Background(), "j", tc.g)
			if !got.Equal(tc.want) || !known || (st.calls == 1) != tc.fromStore {
				t.Errorf("Lookup = %v, %v after %d store calls; want %v, true, from the store %v",
					got, known, st.calls, tc.want, tc.fromStore)
			}
		})
	}
}

func TestLookupWithoutStore(t *testing.T) {
	m := New(nil, host, pid)
	m.Remember("j", "r1", slot(1), true, grant("r0", host, pid))
	if got, known := m.Lookup(context.Background(), "j", grant("r1", host, pid)); known || !got.IsZero() {
		t.Errorf("Lookup without a store = %v, %v; want nothing known", got, known)
	}
}

func TestLookupStoreFails(t *testing.T) {
	st := &store{err: errors.New("disk I/O error")}
	if _, known := New(st.lastOK, host, pid).Lookup(context.Background(), "j", grant("r1", host, pid)); known {
		t.Error("a failing store's slot counted as known")
	}
}

func TestRememberForgets(t *testing.T) {
	for _, tc := range []struct {
		name  string
		known bool
		g     lock.Grant
	}{
		{"slot unknown", false, grant("r1", host, pid)},
		{"run without a lock", true, lock.Grant{}},
		{"lock that cannot vouch", true, lock.Grant{FencingToken: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &store{slot: slot(9)}
			m := New(st.lastOK, host, pid)
			m.Remember("j", "r1", slot(1), true, grant("r0", host, pid))
			m.Remember("j", "r2", slot(2), tc.known, tc.g)
			// Even a lock last held by r2 must not bring r2's slot back.
			if got, _ := m.Lookup(context.Background(), "j", grant("r2", host, pid)); !got.Equal(slot(9)) || st.calls != 1 {
				t.Errorf("Lookup = %v after %d store calls; want the store's %v", got, st.calls, slot(9))
			}
		})
	}
}

func TestMemoIsPerJob(t *testing.T) {
	st := &store{slot: slot(9)}
	m := New(st.lastOK, host, pid)
	m.Remember("a", "r1", slot(1), true, grant("", "", 0))
	if got, _ := m.Lookup(context.Background(), "b", grant("r1", host, pid)); !got.Equal(slot(9)) || st.calls != 1 {
		t.Errorf("job b got %v after %d store calls; want the store's %v", got, st.calls, slot(9))
	}
}
