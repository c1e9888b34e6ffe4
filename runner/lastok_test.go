package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

const (
	memoHost = "web-1"
	memoPID  = 100
)

func memoSlot(min int) time.Time { return time.Date(2026, 3, 1, 12, min, 0, 0, time.UTC) }

// memoStore is a fake Source that counts its calls.
type memoStore struct {
	slot  time.Time
	err   error
	calls int
}

func (s *memoStore) lastOK(context.Context, string) (time.Time, error) {
	s.calls++
	return s.slot, s.err
}

// grant is a file grant whose lock was last held by run runID of the
// supervisor memoPID on h ("" runID: the lock had no record).
func memoGrant(runID, h string, supervisor int) lock.Grant {
	g := lock.Grant{Preceded: true}
	if runID != "" {
		g.Previous = &lock.Record{Holder: run.Holder{PID: 4242, Host: h, Job: "j", RunID: runID}, SupervisorPID: supervisor}
	}
	return g
}

func TestLastOKLookup(t *testing.T) {
	noRecord := lock.Grant{FencingToken: 7} // reads no previous record
	for _, tc := range []struct {
		name      string
		g         lock.Grant
		want      time.Time
		fromStore bool
	}{
		{"previous holder is the memo's run", memoGrant("r1", memoHost, memoPID), memoSlot(1), false},
		{"another run held the lock since", memoGrant("r2", memoHost, memoPID), memoSlot(9), true},
		{"a supervisor with the same memoPID elsewhere", memoGrant("r1", "web-2", memoPID), memoSlot(9), true},
		{"another supervisor here", memoGrant("r1", memoHost, memoPID+1), memoSlot(9), true},
		{"the lock had no record", memoGrant("", "", 0), memoSlot(9), true},
		{"backend without the previous record", noRecord, memoSlot(9), true},
		{"no lock (overlap: allow)", lock.Grant{}, memoSlot(9), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &memoStore{slot: memoSlot(9)}
			m := newLastOKMemo(st.lastOK, memoHost, memoPID)
			m.Remember("j", "r1", memoSlot(1), true, memoGrant("r0", memoHost, memoPID))
			got, known := m.Lookup(context.Background(), "j", tc.g)
			if !got.Equal(tc.want) || !known || (st.calls == 1) != tc.fromStore {
				t.Errorf("Lookup = %v, %v after %d memoStore calls; want %v, true, from the memoStore %v",
					got, known, st.calls, tc.want, tc.fromStore)
			}
		})
	}
}

func TestLastOKLookupWithoutStore(t *testing.T) {
	m := newLastOKMemo(nil, memoHost, memoPID)
	m.Remember("j", "r1", memoSlot(1), true, memoGrant("r0", memoHost, memoPID))
	if got, known := m.Lookup(context.Background(), "j", memoGrant("r1", memoHost, memoPID)); known || !got.IsZero() {
		t.Errorf("Lookup without a memoStore = %v, %v; want nothing known", got, known)
	}
}

func TestLastOKLookupStoreFails(t *testing.T) {
	st := &memoStore{err: errors.New("disk I/O error")}
	if _, known := newLastOKMemo(st.lastOK, memoHost, memoPID).Lookup(context.Background(), "j", memoGrant("r1", memoHost, memoPID)); known {
		t.Error("a failing memoStore's slot counted as known")
	}
}

func TestLastOKRememberForgets(t *testing.T) {
	for _, tc := range []struct {
		name  string
		known bool
		g     lock.Grant
	}{
		{"slot unknown", false, memoGrant("r1", memoHost, memoPID)},
		{"run without a lock", true, lock.Grant{}},
		{"lock that cannot vouch", true, lock.Grant{FencingToken: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &memoStore{slot: memoSlot(9)}
			m := newLastOKMemo(st.lastOK, memoHost, memoPID)
			m.Remember("j", "r1", memoSlot(1), true, memoGrant("r0", memoHost, memoPID))
			m.Remember("j", "r2", memoSlot(2), tc.known, tc.g)
			// Even a lock last held by r2 must not bring r2's slot back.
			if got, _ := m.Lookup(context.Background(), "j", memoGrant("r2", memoHost, memoPID)); !got.Equal(memoSlot(9)) || st.calls != 1 {
				t.Errorf("Lookup = %v after %d memoStore calls; want the memoStore's %v", got, st.calls, memoSlot(9))
			}
		})
	}
}

func TestLastOKMemoIsPerJob(t *testing.T) {
	st := &memoStore{slot: memoSlot(9)}
	m := newLastOKMemo(st.lastOK, memoHost, memoPID)
	m.Remember("a", "r1", memoSlot(1), true, memoGrant("", "", 0))
	if got, _ := m.Lookup(context.Background(), "b", memoGrant("r1", memoHost, memoPID)); !got.Equal(memoSlot(9)) || st.calls != 1 {
		t.Errorf("job b got %v after %d memoStore calls; want the memoStore's %v", got, st.calls, memoSlot(9))
	}
}
