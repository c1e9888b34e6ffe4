package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
)

func TestRedisAcquireBadRequest(t *testing.T) {
	// Refused before any connection: nothing listens on port 1.
	l := newRedisLocker(t, "redis://127.0.0.1:1/0", time.Second)
	tests := []struct {
		name string
		req  lock.Request
		want error // nil: any error
	}{
		{"bad lock name", lock.Request{Name: "a/b"}, lock.ErrBadName},
		{"check slot without a slot", lock.Request{Name: "a", Record: lock.Record{Holder: run.Holder{Job: "j"}}, CheckSlot: true}, nil},
		{"job name with a colon", lock.Request{Name: "a", Record: lock.Record{Holder: run.Holder{Job: "j:k"}, Slot: locktest.SlotAt(1)}, CheckSlot: true}, lock.ErrBadName},
		{"slot before 1970", lock.Request{Name: "a", Record: lock.Record{Holder: run.Holder{Job: "j"}, Slot: time.Unix(-5, 0)}, CheckSlot: true}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := l.Acquire(context.Background(), tc.req)
			if err == nil || errors.Is(err, lock.ErrUnavailable) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("Acquire: %v, want a request error %v before contacting Redis", err, tc.want)
			}
		})
	}
}
