package redis

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/harness/redistest"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
)

// newRedisLocker is a locker on url, closed when the test ends.
func newRedisLocker(t *testing.T, url string, ttl time.Duration) *RedisLocker {
	t.Helper()
	l, err := NewRedisLocker(url, ttl)
	if err != nil {
		t.Fatalf("NewRedisLocker: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// rawRedis is a plain client for looking at and tampering with the keys.
func rawRedis(t *testing.T, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// mustAcquire takes a Redis lease or fails the test; it is released when
// the test ends.
func mustAcquire(ctx context.Context, t *testing.T, l *RedisLocker, req lock.Request) *redisLease {
	t.Helper()
	lease, err := l.Acquire(ctx, req)
	if err != nil {
		t.Fatalf("Acquire(%s, run %s): %v", req.Name, req.Record.RunID, err)
	}
	t.Cleanup(func() { _ = lease.Release() })
	return lease.Lease.(*redisLease)
}

func TestRedisHolderVisibleToSecondHost(t *testing.T) {
	srv := redistest.New(t)
	ctx := locktest.Context(t, 10*time.Second)
	a := newRedisLocker(t, srv.URL(), 5*time.Second)
	b := newRedisLocker(t, srv.URL(), 5*time.Second)
	lease := mustAcquire(ctx, t, a, locktest.Request("sync", "run-a", "host-a", locktest.SlotAt(1)))
	if err := lease.SetPID(4242); err != nil {
		t.Fatalf("SetPID: %v", err)
	}
	want := lock.Record{Holder: run.Holder{PID: 4242, Host: "host-a", Job: "sync", RunID: "run-a"}}
	views := []struct {
		name string
		get  func() (lock.Record, bool, error)
	}{
		{"Acquire", func() (lock.Record, bool, error) {
			_, err := b.Acquire(ctx, locktest.Request("sync", "run-b", "host-b", locktest.SlotAt(2)))
			var held *lock.HeldError
			if !errors.As(err, &held) {
				return lock.Record{}, false, err
			}
			return held.Record, true, nil
		}},
		{"Inspect", func() (lock.Record, bool, error) {
			st, err := b.Inspect(ctx, "orders")
			return st.Record, st.Held, err
		}},
		{"List", func() (lock.Record, bool, error) {
			sts, err := b.List(ctx)
			if err != nil || len(sts) != 1 || sts[0].Name != "orders" {
				return lock.Record{}, false, errors.Join(err, errors.New("want one lock, orders"))
			}
			return sts[0].Record, sts[0].Held, nil
		}},
	}
	for _, v := range views {
		t.Run(v.name, func(t *testing.T) {
			h, held, err := v.get()
			if err != nil || !held {
				t.Fatalf("held=%v err=%v, want held by run-a", held, err)
			}
			assertHolder(t, h, want)
		})
	}
	t.Run("free after release, last record kept", func(t *testing.T) {
		if err := lease.Release(); err != nil {
			t.Fatalf("Release: %v", err)
		}
		st, err := b.Inspect(ctx, "orders")
		if err != nil || st.Held {
			t.Fatalf("Inspect = %+v, %v; want free", st, err)
		}
		assertHolder(t, st.Record, want)
	})
}

// assertHolder compares the fields a holder record must carry across hosts.
func assertHolder(t *testing.T, got, want lock.Record) {
	t.Helper()
	if got.PID != want.PID || got.Host != want.Host || got.Job != want.Job || got.RunID != want.RunID || got.Foreign {
		t.Fatalf("holder = %+v, want pid %d host %s job %s run %s", got, want.PID, want.Host, want.Job, want.RunID)
	}
	if got.Since.IsZero() || got.SupervisorPID == 0 {
		t.Fatalf("holder = %+v, want since and supervisor_pid set", got)
	}
}

func TestRedisConcurrentAcquireOneWinner(t *testing.T) {
	srv := redistest.New(t)
	ctx := locktest.Context(t, 10*time.Second)
	lockers := []*RedisLocker{newRedisLocker(t, srv.URL(), 5*time.Second), newRedisLocker(t, srv.URL(), 5*time.Second)}
	tests := []struct {
		name string
		slot time.Time
	}{
		{"manual", time.Time{}},
		{"scheduled, same slot", locktest.SlotAt(7)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const perLocker = 8
			var mu sync.Mutex
			var won []lock.Lease
			var wg sync.WaitGroup
			for i := range 2 * perLocker {
				wg.Go(func() {
					lease, err := lockers[i%2].Acquire(ctx, locktest.Request("sync", "run", "h", tc.slot))
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						won = append(won, lease)
					case !errors.Is(err, lock.ErrLocked) && !errors.Is(err, lock.ErrSlotDone):
						t.Errorf("Acquire: %v, want success, lock.ErrLocked or lock.ErrSlotDone", err)
					}
				})
			}
			wg.Wait()
			if len(won) != 1 {
				t.Fatalf("%d acquirers won, want exactly 1", len(won))
			}
			if err := won[0].Release(); err != nil {
				t.Fatalf("Release: %v", err)
			}
		})
	}
}

func TestRedisSlotCursor(t *testing.T) {
	srv := redistest.New(t)
	ctx := locktest.Context(t, 10*time.Second)
	a := newRedisLocker(t, srv.URL(), 5*time.Second)
	b := newRedisLocker(t, srv.URL(), 5*time.Second)
	manual := func(slot time.Time) lock.Request {
		r := locktest.Request("sync", "manual", "host-b", slot)
		r.CheckSlot = false
		return r
	}
	steps := []struct {
		name    string
		locker  *RedisLocker
		req     lock.Request
		want    error  // nil, or ErrSlotDone
		wantRun string // the SlotDoneError's record
	}{
		{"first run of slot 1", a, locktest.Request("sync", "r1", "host-a", locktest.SlotAt(1)), nil, ""},
		{"slot 1 again from another host", b, locktest.Request("sync", "r2", "host-b", locktest.SlotAt(1)), lock.ErrSlotDone, "r1"},
		{"earlier slot", b, locktest.Request("sync", "r3", "host-b", locktest.SlotAt(0)), lock.ErrSlotDone, "r1"},
		{"manual run at slot 1 does not check", b, manual(locktest.SlotAt(1)), nil, ""},
		{"manual run at slot 5 does not advance", b, manual(locktest.SlotAt(5)), nil, ""},
		{"slot 2 runs", b, locktest.Request("sync", "r4", "host-b", locktest.SlotAt(2)), nil, ""},
		{"other job sharing the lock has its own cursor", a, locktest.Request("report", "r5", "host-a", locktest.SlotAt(1)), nil, ""},
		{"slot 2 again", a, locktest.Request("sync", "r6", "host-a", locktest.SlotAt(2)), lock.ErrSlotDone, "r4"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			lease, err := st.locker.Acquire(ctx, st.req)
			if !errors.Is(err, st.want) || (st.want == nil) != (err == nil) {
				t.Fatalf("Acquire: %v, want %v", err, st.want)
			}
			if err == nil {
				if err := lease.Release(); err != nil {
					t.Fatalf("Release: %v", err)
				}
				return
			}
			var done *lock.SlotDoneError
			if !errors.As(err, &done) || done.Record.RunID != st.wantRun {
				t.Fatalf("Acquire: %v, want the record of run %s", err, st.wantRun)
			}
		})
	}
}

func TestRedisFencingTokensIncrease(t *testing.T) {
	srv := redistest.New(t)
	ctx := locktest.Context(t, 10*time.Second)
	raw := rawRedis(t, srv.URL())
	lockers := []*RedisLocker{newRedisLocker(t, srv.URL(), 5*time.Second), newRedisLocker(t, srv.URL(), 5*time.Second)}
	var last int64
	for i := range 6 {
		lease, err := lockers[i%2].Acquire(ctx, locktest.Request("sync", "run", "h", locktest.SlotAt(i)))
		if err != nil {
			t.Fatalf("Acquire %d: %v", i, err)
		}
		tok := lease.FencingToken
		if tok <= last {
			t.Fatalf("acquisition %d: fencing token %d, want > %d", i, tok, last)
		}
		last = tok
		rec, err := raw.HGet(ctx, "cronvisor:holder:orders", "rec").Result()
		if err != nil || !strings.Contains(rec, `"fencing_token":`+strconv.FormatInt(tok, 10)) {
			t.Fatalf("holder record %q (%v), want fencing_token %d", rec, err, tok)
		}
		if err := lease.Release(); err != nil {
			t.Fatalf("Release: %v", err)
		}
	}
}

func TestRedisClockSkew(t *testing.T) {
	srv := redistest.New(t)
	l := newRedisLocker(t, srv.URL(), time.Second)
	skew, err := l.ClockSkew(locktest.Context(t, 5*time.Second))
	if err != nil {
		t.Fatalf("ClockSkew: %v", err)
	}
	// Same machine, same clock: only TIME's microseconds and the RTT
	// estimate separate them.
	if skew < -100*time.Millisecond || skew > 100*time.Millisecond {
		t.Fatalf("ClockSkew = %s against a local Redis, want about 0", skew)
	}
}

// TestRedisLeaseMinLifeLeft checks the promise the guard relies on: while
// a Redis lease is renewed, its key always has at least MinLifeLeft to
// live; file grants, which the run's processes hold, offer none (nor Lost
// or a fencing token), and Redis grants no file.
func TestRedisLeaseMinLifeLeft(t *testing.T) {
	srv := redistest.New(t)
	ctx := context.Background()
	const ttl = time.Second
	g, err := newRedisLocker(t, srv.URL(), ttl).Acquire(ctx, locktest.Request("sync", "r1", "a", time.Time{}))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	if !g.Tethered || g.MinLifeLeft != ttl/5 || g.Lost == nil || g.FencingToken <= 0 || g.File != nil || g.Preceded || g.Previous != nil {
		t.Fatalf("redis grant: MinLifeLeft %v, Lost %v, token %d, lock.File %v, Preceded %v; want ttl/5, a channel, > 0, nil, false",
			g.MinLifeLeft, g.Lost, g.FencingToken, g.File, g.Preceded)
	}
	raw := rawRedis(t, srv.URL())
	least := ttl
	for end := time.Now().Add(2 * ttl); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		left, err := raw.PTTL(ctx, DefaultKeyPrefix+"lock:orders").Result()
		if err != nil || left <= 0 {
			t.Fatalf("PTTL: %v, %v: the renewed lease's key is gone", left, err)
		}
		least = min(least, left)
	}
	t.Logf("least time left seen: %v (ttl %v)", least, ttl)
	if least < g.MinLifeLeft {
		t.Errorf("the renewed key had %v left, less than MinLifeLeft %v", least, g.MinLifeLeft)
	}

	fl, err := file.NewLocker(t.TempDir(), locktest.InRun).Acquire(ctx, lock.Request{Name: "orders", Record: lock.Record{Holder: run.Holder{Job: "sync", RunID: "r2"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Release()
	if fl.Tethered || fl.MinLifeLeft != 0 || fl.Lost != nil || fl.FencingToken != 0 || fl.File == nil || !fl.Preceded {
		t.Errorf("file grant: MinLifeLeft %v (its runs would be guarded), Lost %v, token %d, lock.File %v, Preceded %v; want 0, nil, 0, the file, true",
			fl.MinLifeLeft, fl.Lost, fl.FencingToken, fl.File, fl.Preceded)
	}
}

// A Redis record does not outlive its lease, so it never says a run is
// in flight or waits for a retry, whatever the request carried.
func TestRedisRecordNeverInFlight(t *testing.T) {
	srv := redistest.New(t)
	ctx := locktest.Context(t, 10*time.Second)
	l := newRedisLocker(t, srv.URL(), 5*time.Second)
	req := locktest.Request("sync", "run-a", "host-a", locktest.SlotAt(1))
	req.Record.InFlight, req.Record.RetryAt = true, locktest.SlotAt(2)
	mustAcquire(ctx, t, l, req)
	st, err := l.Inspect(ctx, req.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Held || st.Record.RunID != "run-a" || st.Record.InFlight || !st.Record.RetryAt.IsZero() {
		t.Fatalf("Inspect: %+v, want held by run-a, not in flight, no retry", st)
	}
}
