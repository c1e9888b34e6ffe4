package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestReporterLogsEachKindOncePerInterval: a failure repeated thousands of
// times a second is one record per reportEvery, carrying the count of the
// ones it stood for; another kind of failure is not held back by it.
func TestReporterLogsEachKindOncePerInterval(t *testing.T) {
	var buf bytes.Buffer
	r := newReporter(slog.New(slog.NewJSONHandler(&buf, nil)))
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return now }
	full := errors.New("database or disk is full")
	for range 1000 {
		r.error("write run log", full)
	}
	r.error("record skip", full)
	now = now.Add(reportEvery)
	r.error("write run log", full)

	type rec struct {
		Msg        string
		Suppressed int
	}
	var got []rec
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var x rec
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		got = append(got, x)
	}
	want := []rec{
		{"history: write run log failed", 0},
		{"history: record skip failed", 0},
		{"history: write run log failed", 999},
	}
	if len(got) != len(want) {
		t.Fatalf("log records %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
