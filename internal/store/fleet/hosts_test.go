package fleet

import (
	"testing"
	"time"
)

func TestBeatUpsertsTheHostsRow(t *testing.T) {
	url, db := newDB(t)
	s := openStore(t, url, "host-a")
	started := time.Now().Add(-time.Minute).Round(time.Microsecond)
	for i, v := range []string{"v1", "v2"} {
		offset, _, err := s.Beat(t.Context(), v, 100+i, started)
		if err != nil {
			t.Fatalf("beat %d: %v", i, err)
		}
		// One machine, one clock: only the round trip's asymmetry is left.
		if offset < -50*time.Millisecond || offset > 50*time.Millisecond {
			t.Errorf("beat %d: offset %v from the server on the same machine", i, offset)
		}
		if i == 0 {
			silence(t, db, "host-a", time.Hour)
			if err := s.Stopped(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	var n, pid int
	var version string
	var stopped bool
	var silentS float64
	var got time.Time
	err := db.QueryRowContext(t.Context(), `SELECT count(*) OVER (), version, pid, stopped,
		EXTRACT(EPOCH FROM now() - last_beat)::float8, started_at FROM cronvisor_hosts`).
		Scan(&n, &version, &pid, &stopped, &silentS, &got)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || version != "v2" || pid != 101 || stopped || silentS > 5 || !got.Equal(started) {
		t.Errorf("after two beats: %d rows, version %q, pid %d, stopped %v, silent %.1fs, started %v; "+
			"want 1 row, v2, 101, not stopped, fresh, %v", n, version, pid, stopped, silentS, got, started)
	}
}

func TestHostsStates(t *testing.T) {
	url, db := newDB(t)
	stores := map[string]*Store{}
	for _, h := range []string{"up", "silent", "stopped", "back"} {
		stores[h] = openStore(t, url, h)
		if _, _, err := stores[h].Beat(t.Context(), "v-"+h, 7, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	silence(t, db, "silent", UpWithin+time.Second)
	silence(t, db, "stopped", time.Hour)
	for _, h := range []string{"stopped", "back"} {
		if err := stores[h].Stopped(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := stores["back"].Beat(t.Context(), "v-back", 8, time.Now()); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	insertRunning(t, db, "r-up-2", "b", "up", t0.Add(time.Second))
	insertRunning(t, db, "r-up-1", "a", "up", t0)
	insertRunning(t, db, "r-ghost", "c", "ghost", t0)
	mustExec(t, db, `INSERT INTO cronvisor_runs (run_id, job, host, outcome, at) VALUES ('r-done', 'a', 'up', 'ok', 1)`)

	hosts, err := stores["up"].Hosts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name    string
		state   HostState
		running []string
	}{
		{"back", HostUp, nil},
		{"ghost", HostLost, []string{"r-ghost"}},
		{"silent", HostLost, nil},
		{"stopped", HostStopped, nil},
		{"up", HostUp, []string{"r-up-1", "r-up-2"}},
	}
	if len(hosts) != len(want) {
		t.Fatalf("got %d hosts %+v, want %d", len(hosts), hosts, len(want))
	}
	for i, w := range want {
		t.Run(w.name, func(t *testing.T) {
			h := hosts[i]
			var ids []string
			for _, r := range h.Running {
				ids = append(ids, r.RunID)
			}
			if h.Name != w.name || h.State != w.state || len(ids) != len(w.running) {
				t.Fatalf("got %s %s running %v, want %s %s running %v", h.Name, h.State, ids, w.name, w.state, w.running)
			}
			for j := range ids {
				if ids[j] != w.running[j] {
					t.Errorf("running %v, want %v (oldest first)", ids, w.running)
				}
			}
			if w.name == "up" && (h.Version != "v-up" || h.PID != 7 || h.Silent > UpWithin || !h.Running[0].Started.Equal(t0)) {
				t.Errorf("up: %+v", h)
			}
		})
	}
}

// PeersUpSince is the earliest start of the other hosts up now, by this
// host's clock (each peer's start converted by its own offset): hosts
// silent past UpWithin, stopped, or this host's own row do not count.
func TestPeersUpSince(t *testing.T) {
	url, db := newDB(t)
	me := openStore(t, url, "me")
	if _, ok, err := me.PeersUpSince(t.Context()); err != nil || ok {
		t.Fatalf("no host at all: ok %v, %v; want none up", ok, err)
	}
	now := time.Now()
	starts := map[string]time.Duration{"me": -time.Hour, "late": -time.Minute, "early": -10 * time.Minute,
		"silent": -2 * time.Hour, "stopped": -3 * time.Hour, "skewed": -20 * time.Minute}
	for h, ago := range starts {
		if _, _, err := openStore(t, url, h).Beat(t.Context(), "v", 1, now.Add(ago)); err != nil {
			t.Fatal(err)
		}
	}
	silence(t, db, "silent", UpWithin+time.Second)
	if err := openStore(t, url, "stopped").Stopped(t.Context()); err != nil {
		t.Fatal(err)
	}
	// "skewed"'s clock is 15 min slow: it started 5 min ago by the server's.
	mustExec(t, db, `UPDATE cronvisor_hosts SET clock_offset_ms = -900000 WHERE host = 'skewed'`)
	since, ok, err := me.PeersUpSince(t.Context())
	if err != nil || !ok {
		t.Fatalf("PeersUpSince: ok %v, %v", ok, err)
	}
	if want := now.Add(-10 * time.Minute); since.Sub(want).Abs() > 100*time.Millisecond {
		t.Errorf("since %v, want early's start %v", since, want)
	}
	if _, ok, err := openStore(t, url, "alone").PeersUpSince(t.Context()); err != nil || !ok {
		t.Errorf("another host's view: ok %v, %v; want peers up", ok, err)
	}
	silence(t, db, "early", UpWithin+time.Second)
	silence(t, db, "late", UpWithin+time.Second)
	since, ok, err = me.PeersUpSince(t.Context())
	if want := now.Add(-5 * time.Minute); err != nil || !ok || since.Sub(want).Abs() > 100*time.Millisecond {
		t.Errorf("with early and late silent: %v, %v, %v; want skewed's start by the server's clock, %v", since, ok, err, want)
	}
}
