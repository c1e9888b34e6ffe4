package daemon

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/ratelog"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
	"cronvisor/internal/daemon/owner"
	"cronvisor/internal/store/fleet"
)

// fakeMembers answers Read with rows, or fails while failing is set.
type fakeMembers struct {
	mu        sync.Mutex
	rows      []fleet.Member
	failing   bool
	published [][]uint64
}

func (f *fakeMembers) Read(_ context.Context, jobs []uint64) ([]fleet.Member, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.published = append(f.published, slices.Sorted(slices.Values(jobs)))
	if f.failing {
		return nil, errors.New("server down")
	}
	return f.rows, nil
}

func ownedJob(t *testing.T, name string) config.Job {
	s, err := schedule.Parse("@every 10s", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return config.Job{Name: name, Schedule: "@every 10s", Sched: s, Lock: name, Enabled: true}
}

// The members loop reads the hosts every beat into the gate, publishing
// this host's digests; while its reads fail the gate goes stale within
// the fleet's staleness and this host fires everything.
func TestMembersLoopFeedsTheGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := ownedJob(t, "backup")
		cfg := &config.Config{Jobs: []config.Job{j}}
		d := owner.Digest(&j)
		// Whichever of the two the job's rendezvous hash prefers, the
		// other host is the one whose gate is tested: it must leave it.
		gate := owner.New("me", clock.Real{}, fleet.UpWithin, fleet.BeatEvery)
		rows := []fleet.Member{{Host: "me", PID: 1, Silent: 0}, {Host: "other", PID: 2, Silent: 0, Jobs: []uint64{d}}}
		store := &fakeMembers{rows: rows}
		stop := startMembers(&members{r: store, gate: gate, host: "me", clk: clock.Real{},
			current: func() *config.Config { return cfg }, failures: ratelog.New(slog.New(slog.DiscardHandler), ratelog.Every)})
		defer stop()
		synctest.Wait()
		host, ok := gate.Owner(&j)
		if !ok || (host != "me" && host != "other") {
			t.Fatalf("owner %q, %v after the first read; want one of the two", host, ok)
		}
		store.mu.Lock()
		if len(store.published) != 1 || !slices.Equal(store.published[0], []uint64{d}) {
			t.Errorf("published %v, want this host's one digest", store.published)
		}
		store.failing = true
		store.mu.Unlock()
		time.Sleep(fleet.UpWithin + 2*fleet.BeatEvery)
		synctest.Wait()
		if _, ok := gate.Owner(&j); ok {
			t.Error("the gate still names an owner after the reads failed for longer than the staleness")
		}
		if fire, done := gate.Slot(t.Context(), &j); !fire {
			t.Error("a host that cannot read the fleet left a slot")
		} else {
			done()
		}
	})
}

func TestViewIsByThisHostsClock(t *testing.T) {
	mid := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	mine := map[uint64]bool{7: true}
	v := view([]fleet.Member{
		{Host: "me", PID: 1, Offset: 200 * time.Millisecond, Silent: 500 * time.Millisecond, Jobs: []uint64{1}},
		{Host: "b", PID: 2, Offset: -300 * time.Millisecond, Silent: 2 * time.Second, Jobs: []uint64{7, 8}},
		{Host: "c", PID: 3, Silent: 4 * time.Second},
		{Host: "d", PID: 4, Stopped: true},
	}, "me", mine, mid)
	if v.Read != mid || len(v.Members) != 4 {
		t.Fatalf("view %+v", v)
	}
	// Before its first beat reached the table, this host is in its view.
	if alone := view(nil, "me", mine, mid); len(alone.Members) != 1 || !alone.Members[0].Up || !alone.Members[0].Jobs[7] {
		t.Errorf("a view without this host's row: %+v; want this host up with its jobs", alone)
	}
	me, b, c, d := v.Members[0], v.Members[1], v.Members[2], v.Members[3]
	if !me.Up || !me.Jobs[7] || me.Jobs[1] || me.Offset != 0 {
		t.Errorf("this host %+v: want up, its own jobs as it runs them now, offset 0", me)
	}
	if !b.Up || !b.Jobs[8] || b.Offset != -500*time.Millisecond || !b.LastBeat.Equal(mid.Add(-2*time.Second)) {
		t.Errorf("host b %+v: want up, jobs 7 and 8, offset -500ms from this host's, last beat 2 s before the read", b)
	}
	if c.Up || d.Up {
		t.Errorf("c (silent 4 s) up %v, d (stopped) up %v; want neither", c.Up, d.Up)
	}
	if b.Incarnation == c.Incarnation {
		t.Error("two daemons with one incarnation")
	}
}
