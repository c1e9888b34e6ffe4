package proc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestEncodeGuardKnowsEveryField(t *testing.T) {
	var got []string
	for _, f := range reflect.VisibleFields(reflect.TypeFor[guardFile]()) {
		got = append(got, f.Name)
	}
	if want := []string{"Written", "Args", "Lease"}; !slices.Equal(got, want) {
		t.Errorf("guardFile's fields are %v; encodeGuard writes %v", got, want)
	}
}

// TestEncodeGuardIsJSONMarshal compares encodeGuard with json.Marshal on
// a run's real keeper arguments, and on each value the fast path hands
// to encoding/json.
func TestEncodeGuardIsJSONMarshal(t *testing.T) {
	at := time.Date(2026, 12, 5, 6, 1, 2, 345678900, time.UTC)
	k := Keeper{Deadline: at.Add(time.Hour), Timeout: time.Hour, End: "/var/lib/cronvisor/runs/r.end",
		Log: "/var/lib/cronvisor/logs/sync/r.log", Run: KeptRun{Job: "sync_orders", Slot: at.Truncate(time.Minute), Attempt: 1}}
	spec := Spec{Tag: "CRONVISOR_RUN_ID=20261205T060102-0a1b2c3d", KillGrace: 10 * time.Second}
	args := keeperArgs(k, spec, "/sys/fs/cgroup/cronvisor/run-20261205T060102-0a1b2c3d")[1:]
	full := guardFile{Written: at, Args: args, Lease: []byte(`{"kind":"redis","url":"redis://:pw@h:6379/0"}`)}
	cases := map[string]guardFile{"zero": {}, "full": full, "no lease": {Written: at, Args: args},
		"empty lease": {Written: at, Args: args, Lease: []byte{}}, "no args": {Written: at, Args: []string{}}}
	for name, arg := range map[string]string{
		"html": "a<b>&c", "quote": `sh -c "x"`, "backslash": `a\b`, "control character": "a\tb",
		"non-ASCII": "tâche", "invalid UTF-8": "\xff", "line separator": "a\u2028b",
	} {
		g := full
		g.Args = append(slices.Clone(args), arg)
		cases[name] = g
	}
	for name, w := range map[string]time.Time{
		"zone offset": at.In(time.FixedZone("x", 3600)), "year 10000": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		"a day's zone offset": at.In(time.FixedZone("far", 24*3600)),
	} {
		g := full
		g.Written = w
		cases[name] = g
	}
	for name, g := range cases {
		want, wantErr := json.Marshal(g)
		got, gotErr := encodeGuard(g)
		if (wantErr != nil) != (gotErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s (%v)\nwant %s (%v)", name, got, gotErr, want, wantErr)
		}
	}
}

// FuzzEncodeGuard holds encodeGuard to json.Marshal for any arguments,
// lease and time.
func FuzzEncodeGuard(f *testing.F) {
	f.Add("-tag", "CRONVISOR_RUN_ID=x", []byte("lease"), int64(1.8e9))
	f.Add("a<", "\x00\"", []byte(nil), int64(253402300800))
	f.Fuzz(func(t *testing.T, a, b string, lease []byte, written int64) {
		g := guardFile{Written: time.Unix(written, 123456789).UTC(), Args: []string{a, b}, Lease: lease}
		want, wantErr := json.Marshal(g)
		got, gotErr := encodeGuard(g)
		if (wantErr != nil) != (gotErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("got %s (%v), want %s (%v)", got, gotErr, want, wantErr)
		}
	})
}

// BenchmarkGuardEncode: a run's guard, by encoding/json and by
// encodeGuard (the ratio is what to read).
func BenchmarkGuardEncode(b *testing.B) {
	at := time.Date(2026, 12, 5, 6, 1, 2, 345678900, time.UTC)
	k := Keeper{Deadline: at.Add(time.Hour), Timeout: time.Hour, End: "/var/lib/cronvisor/runs/r.end",
		Log: "/var/lib/cronvisor/logs/sync/r.log", Run: KeptRun{Job: "sync_orders", Slot: at.Truncate(time.Minute), Attempt: 1}}
	spec := Spec{Tag: "CRONVISOR_RUN_ID=20261205T060102-0a1b2c3d", KillGrace: 10 * time.Second}
	g := guardFile{Written: at, Args: keeperArgs(k, spec, "/sys/fs/cgroup/cronvisor/run-20261205T060102-0a1b2c3d")[1:]}
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(g); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encodeGuard", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeGuard(g); err != nil {
				b.Fatal(err)
			}
		}
	})
}
