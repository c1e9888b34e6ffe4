package file

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// recordFields are the fields encodeRecord writes. A field added to
// lock.Record (or run.Holder) fails the test below until encodeRecord
// writes it and it is listed here.
var recordFields = []string{"PID", "Host", "Job", "RunID", "Since", "Foreign", "Cmdline",
	"Slot", "SupervisorPID", "Slots", "InFlight", "RetryAt"}

func TestEncodeRecordKnowsEveryField(t *testing.T) {
	var got []string
	for _, f := range reflect.VisibleFields(reflect.TypeFor[lock.Record]()) {
		if !f.Anonymous {
			got = append(got, f.Name)
		}
	}
	if !slices.Equal(got, recordFields) {
		t.Errorf("lock.Record's fields are %v; encodeRecord writes %v", got, recordFields)
	}
}

// TestEncodeRecordIsJSONMarshal compares encodeRecord with json.Marshal
// on records that set every field, none, and each of the values the fast
// path hands to encoding/json.
func TestEncodeRecordIsJSONMarshal(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 4, 1, 2, 3, 456789000, time.UTC)
	full := lock.Record{
		Holder: run.Holder{PID: 4242, Host: "host-a", Job: "sync_orders", RunID: "20261204T010203-0a1b2c3d",
			Since: at, Foreign: true, Cmdline: "flock -n /x sleep 60"},
		Slot: at.Truncate(time.Minute), SupervisorPID: 7,
		Slots:    map[string]time.Time{"b": at, "a": at.In(berlin), "c": at.Add(time.Second)},
		InFlight: true, RetryAt: at.Add(time.Minute),
	}
	cases := map[string]lock.Record{"zero": {}, "full": full}
	for name, change := range map[string]func(h *lock.Record){
		"html in a job":       func(h *lock.Record) { h.Job = "a<b>&c" },
		"quote in a cmdline":  func(h *lock.Record) { h.Cmdline = `sh -c "x"` },
		"backslash":           func(h *lock.Record) { h.Host = `a\b` },
		"control character":   func(h *lock.Record) { h.Cmdline = "a\tb\x01" },
		"non-ASCII host":      func(h *lock.Record) { h.Host = "hôte" },
		"invalid UTF-8":       func(h *lock.Record) { h.RunID = "\xff\xfe" },
		"line separator":      func(h *lock.Record) { h.Job = "a\u2028b" },
		"odd key in slots":    func(h *lock.Record) { h.Slots = map[string]time.Time{"x<y": at} },
		"empty slots":         func(h *lock.Record) { h.Slots = map[string]time.Time{} },
		"zone offset":         func(h *lock.Record) { h.Slot = at.In(berlin) },
		"year 10000":          func(h *lock.Record) { h.RetryAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"negative year":       func(h *lock.Record) { h.Since = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) },
		"a day's zone offset": func(h *lock.Record) { h.Slot = at.In(time.FixedZone("far", 24*3600)) },
		"negative pid":        func(h *lock.Record) { h.PID = -1 },
	} {
		h := full
		h.Slots = maps.Clone(full.Slots)
		change(&h)
		cases[name] = h
	}
	for name, h := range cases {
		want, wantErr := json.Marshal(h)
		got, gotErr := encodeRecord(h)
		if (wantErr != nil) != (gotErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s (%v)\nwant %s (%v)", name, got, gotErr, want, wantErr)
		}
	}
}

// FuzzEncodeRecord holds encodeRecord to json.Marshal for any strings,
// pids and times.
func FuzzEncodeRecord(f *testing.F) {
	f.Add(1, "host", "job", "run", "cmd", int64(0), int64(1e18), true)
	f.Add(-5, "h<", "j\"", "r\\", "\x00", int64(-1e18), int64(253402300800), false)
	f.Fuzz(func(t *testing.T, pid int, host, job, runID, cmd string, since, slot int64, inFlight bool) {
		h := lock.Record{Holder: run.Holder{PID: pid, Host: host, Job: job, RunID: runID, Cmdline: cmd,
			Since: time.Unix(0, since).UTC()},
			Slot: time.Unix(slot, 0).UTC(), SupervisorPID: pid, InFlight: inFlight,
			Slots: map[string]time.Time{job: time.Unix(0, since), host: time.Unix(slot, 0)}}
		want, wantErr := json.Marshal(h)
		got, gotErr := encodeRecord(h)
		if (wantErr != nil) != (gotErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("got %s (%v), want %s (%v)", got, gotErr, want, wantErr)
		}
	})
}

// BenchmarkRecordEncode: a run's record, by encoding/json and by
// encodeRecord (the ratio is what to read).
func BenchmarkRecordEncode(b *testing.B) {
	at := time.Date(2026, 12, 4, 1, 2, 3, 456789000, time.UTC)
	h := lock.Record{Holder: run.Holder{PID: 4242, Host: "host-a", Job: "sync_orders", RunID: "20261204T010203-0a1b2c3d", Since: at},
		Slot: at.Truncate(time.Minute), SupervisorPID: 7, Slots: map[string]time.Time{"sync_orders": at}, InFlight: true}
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encodeRecord", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeRecord(h); err != nil {
				b.Fatal(err)
			}
		}
	})
}
