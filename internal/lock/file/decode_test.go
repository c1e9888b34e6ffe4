package file

import (
	"encoding/json"
	"maps"
	"reflect"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// TestDecodeRecordIsJSONUnmarshal: every record encodeRecord writes (the
// cases of TestEncodeRecordIsJSONMarshal's kind), and lines it never
// writes, decode as json.Unmarshal decodes them; the plain ones by the
// fast path.
func TestDecodeRecordIsJSONUnmarshal(t *testing.T) {
	at := time.Date(2026, 12, 4, 1, 2, 3, 456789000, time.UTC)
	full := lock.Record{
		Holder: run.Holder{PID: 4242, Host: "host-a", Job: "sync_orders", RunID: "20261204T010203-0a1b2c3d",
			Since: at, Foreign: true, Cmdline: "flock -n /x sleep 60"},
		Slot: at.Truncate(time.Minute), SupervisorPID: 7,
		Slots:    map[string]time.Time{"b": at, "a": at.In(time.FixedZone("x", 3600)), "c": at.Add(time.Second)},
		InFlight: true, RetryAt: at.Add(time.Minute),
	}
	plain := map[string]string{}
	for name, h := range map[string]lock.Record{"zero": {}, "full": full, "no slots": {Slot: at, SupervisorPID: 1},
		"empty slots": {Slots: map[string]time.Time{}}} {
		b, err := encodeRecord(h)
		if err != nil {
			t.Fatal(err)
		}
		plain[name] = string(b)
	}
	for name, line := range plain {
		if _, ok := decodePlain([]byte(line)); !ok {
			t.Errorf("%s: the fast path refused encodeRecord's line %s", name, line)
		}
	}
	others := map[string]string{
		"spaces":        `{ "pid": 1 }`,
		"escape":        `{"pid":1,"job":"a\u003cb"}`,
		"upper key":     `{"PID":3,"host":"h"}`,
		"unknown key":   `{"pid":1,"extra":[1,2]}`,
		"repeated key":  `{"pid":1,"pid":2}`,
		"null":          `{"pid":null,"host":"h"}`,
		"fraction":      `{"pid":1.5}`,
		"leading zero":  `{"pid":01}`,
		"huge":          `{"pid":99999999999999999999}`,
		"negative zero": `{"pid":-0}`,
		"bad time":      `{"slot":"yesterday"}`,
		"trailing":      `{"pid":1}x`,
		"unclosed":      `{"pid":1`,
		"repeated slot": `{"slots":{"a":"2026-01-01T00:00:00Z","a":"2026-01-02T00:00:00Z"}}`,
		"non-ASCII":     `{"host":"hôte"}`,
		"not an object": `[1]`,
	}
	maps.Copy(others, plain)
	for name, line := range others {
		same(t, name, []byte(line))
	}
}

// same fails t unless decodeRecord and json.Unmarshal agree on line.
func same(t *testing.T, name string, line []byte) {
	t.Helper()
	var want lock.Record
	wantOK := json.Unmarshal(line, &want) == nil
	got, ok := decodeRecord(line)
	if ok != wantOK || ok && !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %s:\n got %+v (%v)\nwant %+v (%v)", name, line, got, ok, want, wantOK)
	}
}

// FuzzDecodeRecord holds decodeRecord to json.Unmarshal for any line.
func FuzzDecodeRecord(f *testing.F) {
	for _, h := range []lock.Record{{}, {Holder: run.Holder{PID: 3, Host: "h", Job: "j", RunID: "r",
		Since: time.Unix(5, 6).UTC()}, Slot: time.Unix(60, 0).UTC(), SupervisorPID: 2, InFlight: true,
		Slots: map[string]time.Time{"j": time.Unix(60, 0).UTC()}, RetryAt: time.Unix(120, 0).UTC()}} {
		b, _ := encodeRecord(h)
		f.Add(b)
	}
	f.Add([]byte(`{"pid":-0,"slots":{}}`))
	f.Fuzz(func(t *testing.T, line []byte) { same(t, "fuzz", line) })
}

// BenchmarkRecordDecode: a run's record, by encoding/json and by
// decodeRecord (the ratio is what to read).
func BenchmarkRecordDecode(b *testing.B) {
	at := time.Date(2026, 12, 4, 1, 2, 3, 456789000, time.UTC)
	line, err := encodeRecord(lock.Record{Holder: run.Holder{PID: 4242, Host: "host-a", Job: "sync_orders",
		RunID: "20261204T010203-0a1b2c3d", Since: at}, Slot: at.Truncate(time.Minute), SupervisorPID: 7,
		Slots: map[string]time.Time{"sync_orders": at.Truncate(time.Minute)}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var h lock.Record
			if json.Unmarshal(line, &h) != nil {
				b.Fatal("bad line")
			}
		}
	})
	b.Run("decodeRecord", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeRecord(line); !ok {
				b.Fatal("bad line")
			}
		}
	})
}
