package backends

import (
	"bytes"
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/harness/redistest"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/redis"
)

func TestCombineHandoffsKeepsOneAsItIs(t *testing.T) {
	a, b := []byte(`{"kind":"redis","name":"a"}`), []byte(`{"kind":"redis","name":"b"}`)
	if got := CombineHandoffs(); got != nil {
		t.Errorf("none combined: %s", got)
	}
	if got := CombineHandoffs(nil, a, nil); !bytes.Equal(got, a) {
		t.Errorf("one combined: %s, want it as it was", got)
	}
	ab := CombineHandoffs(a, b)
	if lock.HandoffKind(ab) != combinedKind {
		t.Fatalf("two combined: %s", ab)
	}
	if got, want := CombineHandoffs(ab, a), CombineHandoffs(a, b, a); !bytes.Equal(got, want) {
		t.Errorf("a combined one in a combination: %s, want it flattened: %s", got, want)
	}
	for _, h := range []string{`{"kind":"combined","parts":[]}`, `{"kind":"combined","parts":[{"kind":"file"}]}`} {
		if kl, err := KeepLease([]byte(h)); err == nil {
			_ = kl.Release()
			t.Errorf("KeepLease(%s) took it over", h)
		}
	}
}

// grantOn takes lock name on a Redis locker of its own (prefix, ttl),
// whose client closes at the test's end.
func grantOn(ctx context.Context, t *testing.T, url, prefix, name string, ttl time.Duration) (lock.Grant, *redis.RedisLocker) {
	t.Helper()
	l, err := redis.NewRedisLocker(url, ttl, redis.WithKeyPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	g, err := l.Acquire(ctx, lock.Request{Name: name, Record: lock.Record{Holder: run.Holder{Job: "j", RunID: "r"}}})
	if err != nil {
		t.Fatal(err)
	}
	return g, l
}

// A keeper given a run's lock and its two slots as one hand-off keeps
// all three past their ttl once the supervisor is gone, loses them all
// when one is lost, leaves the shortest Within and releases them all.
func TestKeepLeaseKeepsEveryCombinedLease(t *testing.T) {
	srv := redistest.New(t)
	ctx := locktest.Context(t, 20*time.Second)
	g1, l1 := grantOn(ctx, t, srv.URL(), "cv:", "job", 2*time.Second)
	g2, l2 := grantOn(ctx, t, srv.URL(), "cv.resource:", "db.0", time.Second)
	g3, l3 := grantOn(ctx, t, srv.URL(), "cv.resource:", "db.1", time.Second)
	kl, err := KeepLease(CombineHandoffs(g1.Handoff, g2.Handoff, g3.Handoff))
	if err != nil {
		t.Fatal(err)
	}
	if w := kl.Within(); w != time.Second/5 {
		t.Errorf("Within = %s, want the shortest lease's margin, 200ms", w)
	}
	for _, l := range []*redis.RedisLocker{l1, l2, l3} {
		_ = l.Close() // the supervisor dies: nothing of it renews any more
	}
	kctx, stop := context.WithCancel(ctx)
	defer stop()
	lost := kl.Keep(kctx)
	time.Sleep(2500 * time.Millisecond) // past every ttl
	raw := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	defer raw.Close()
	keys := []string{"cv:lock:job", "cv.resource:lock:db.0", "cv.resource:lock:db.1"}
	if n, err := raw.Exists(ctx, keys...).Result(); err != nil || n != 3 {
		t.Fatalf("%d of the 3 leases kept past their ttl (%v)", n, err)
	}
	select {
	case <-lost:
		t.Fatal("lost while every lease was kept")
	default:
	}
	raw.Del(ctx, "cv.resource:lock:db.1")
	select {
	case <-lost:
	case <-time.After(2 * time.Second):
		t.Fatal("one lease lost and the combination was not")
	}
	if err := kl.Release(); err != nil {
		t.Fatal(err)
	}
	if n, err := raw.Exists(ctx, keys...).Result(); err != nil || n != 0 {
		t.Errorf("%d leases left after Release (%v)", n, err)
	}
}
