package redis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/harness/redistest"
	"cronvisor/internal/lock"
)

// redisHelperEnv makes the test binary hold a Redis lock until it is
// killed (see TestRedisKilledHolderExpires). It is read in init, which
// runs before any test, so that the helper keeps to this file.
const redisHelperEnv = "LOCK_TEST_REDIS_HELPER"

func init() {
	if url := os.Getenv(redisHelperEnv); url != "" {
		if err := holdRedisLock(url); err != nil {
			fmt.Fprintln(os.Stderr, "redis helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// holdRedisLock takes lock "orders" with a 1 s TTL for run "run-killed",
// says "held", and keeps renewing until killed (or stdin closes).
func holdRedisLock(url string) error {
	l, err := NewRedisLocker(url, time.Second)
	if err != nil {
		return err
	}
	lease, err := l.Acquire(context.Background(), locktest.Request("sync", "run-killed", "host-k", time.Time{}))
	if err != nil {
		return err
	}
	fmt.Println("held")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return lease.Release()
}

func TestRedisKilledHolderExpires(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	srv := redistest.New(t)
	ctx := locktest.Context(t, 10*time.Second)
	raw := rawRedis(t, srv.URL())
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), redisHelperEnv+"="+srv.URL())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe() // held open: the helper waits on it
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locktest.KillGroup(cmd.Process.Pid); _ = cmd.Wait() })
	if line, err := locktest.ReadLine(ctx, stdout); line != "held" {
		t.Fatalf("helper said %q (%v), want held", line, err)
	}
	// Kill a holder that has been renewing, as a real one would be.
	// Between renewals the TTL only falls: any rise is a renewal. (Against
	// the first reading alone, one taken just after the acquisition, a
	// renewal read a moment later than its own write could never show.)
	prev := raw.PTTL(ctx, "cronvisor:lock:orders").Val()
	locktest.WaitUntil(ctx, t, "the helper renews its lease", func() bool {
		cur := raw.PTTL(ctx, "cronvisor:lock:orders").Val()
		renewed := cur > prev
		prev = cur
		return renewed
	})
	locktest.KillGroup(cmd.Process.Pid)
	_ = cmd.Wait()
	killed := time.Now()
	left, err := raw.PTTL(ctx, "cronvisor:lock:orders").Result()
	if err != nil || left <= 0 {
		t.Fatalf("PTTL after the kill = %s (%v), want the lock still held", left, err)
	}
	l := newRedisLocker(t, srv.URL(), ttl)
	var sawHolder bool
	for {
		lease, err := l.Acquire(ctx, locktest.Request("sync", "run-next", "host-n", time.Time{}))
		if err == nil {
			_ = lease.Release()
			break
		}
		var held *lock.HeldError
		if !errors.As(err, &held) || held.Record.RunID != "run-killed" {
			t.Fatalf("Acquire while the dead holder's lease lasts: %v, want held by run-killed", err)
		}
		sawHolder = true
		select {
		case <-ctx.Done():
			t.Fatal("lock never freed after its holder was killed")
		case <-time.After(10 * time.Millisecond):
		}
	}
	got := time.Since(killed)
	t.Logf("lock freed %s after the kill; PTTL then %s", got, left)
	// The key lives out the TTL of the holder's last renewal (ttl/3 apart),
	// which PTTL measured just after the kill.
	if !sawHolder || got < left-30*time.Millisecond || got < ttl/2 || got > ttl+time.Second {
		t.Fatalf("first success %s after the kill (PTTL then %s), want after the lease ran out, within ttl+1s", got, left)
	}
}

func TestRedisRenewalAndRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: waits out Redis lease TTLs; runs in the full suite")
	}
	t.Parallel()
	srv := redistest.New(t)
	ctx := locktest.Context(t, 15*time.Second)
	raw := rawRedis(t, srv.URL())
	a := newRedisLocker(t, srv.URL(), time.Second)
	b := newRedisLocker(t, srv.URL(), time.Second)
	lease := mustAcquire(ctx, t, a, locktest.Request("sync", "run-a", "host-a", time.Time{}))
	select { // three TTLs: only renewal keeps the key alive that long
	case <-lease.Lost():
		t.Fatal("lease lost while Redis is up")
	case <-time.After(3 * time.Second):
	}
	steps := []struct {
		name  string
		check func() error
	}{
		{"still held after 3 TTLs", func() error {
			if _, err := b.Acquire(ctx, locktest.Request("sync", "run-b", "host-b", time.Time{})); !errors.Is(err, lock.ErrLocked) {
				return fmt.Errorf("second host's Acquire: %v, want lock.ErrLocked", err)
			}
			return nil
		}},
		{"release deletes the key", func() error {
			if err := lease.Release(); err != nil {
				return err
			}
			if n, err := raw.Exists(ctx, "cronvisor:lock:orders").Result(); n != 0 || err != nil {
				return fmt.Errorf("lock key exists=%d (%v) after Release", n, err)
			}
			return nil
		}},
		{"release again is a no-op", lease.Release},
		{"set pid after release", func() error {
			if err := lease.SetPID(1); !errors.Is(err, lock.ErrReleased) {
				return fmt.Errorf("SetPID: %v, want lock.ErrReleased", err)
			}
			return nil
		}},
		{"free for the second host", func() error {
			next, err := b.Acquire(ctx, locktest.Request("sync", "run-b", "host-b", time.Time{}))
			if err == nil {
				err = next.Release()
			}
			return err
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if err := st.check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRedisExpiredLeaseSparesSuccessor(t *testing.T) {
	srv := redistest.New(t)
	ctx := locktest.Context(t, 10*time.Second)
	raw := rawRedis(t, srv.URL())
	a := newRedisLocker(t, srv.URL(), time.Second)
	b := newRedisLocker(t, srv.URL(), time.Second)
	old := mustAcquire(ctx, t, a, locktest.Request("sync", "run-old", "host-a", time.Time{}))
	old.stopRenewal() // a holder stalled past its TTL
	if err := raw.PExpire(ctx, "cronvisor:lock:orders", time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	locktest.WaitUntil(ctx, t, "the stalled lease expires", func() bool {
		n, err := raw.Exists(ctx, "cronvisor:lock:orders").Result()
		return err == nil && n == 0
	})
	succ := mustAcquire(ctx, t, b, locktest.Request("sync", "run-new", "host-b", time.Time{}))
	steps := []struct {
		name  string
		check func() error
	}{
		{"set pid finds the lease lost", func() error {
			if err := old.SetPID(7); !errors.Is(err, ErrLeaseLost) {
				return fmt.Errorf("SetPID: %v, want ErrLeaseLost", err)
			}
			select {
			case <-old.Lost():
				return nil
			default:
				return errors.New("Lost not closed")
			}
		}},
		{"release spares the successor", func() error {
			if err := old.Release(); err != nil {
				return err
			}
			tok, err := raw.Get(ctx, "cronvisor:lock:orders").Result()
			if err != nil || tok != succ.token {
				return fmt.Errorf("lock token %q (%v), want the successor's", tok, err)
			}
			return nil
		}},
		{"successor's record intact", func() error {
			st, err := a.Inspect(ctx, "orders")
			if err != nil || !st.Held || st.Record.RunID != "run-new" || st.Record.PID == 7 {
				return fmt.Errorf("Inspect = %+v, %v; want held by run-new", st, err)
			}
			return nil
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if err := st.check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRedisScriptsRefuseForeignToken runs the write scripts with a token
// that is not the holder's, as a lease that lost its lock would.
func TestRedisScriptsRefuseForeignToken(t *testing.T) {
	srv := redistest.New(t)
	ctx := locktest.Context(t, 10*time.Second)
	raw := rawRedis(t, srv.URL())
	l := newRedisLocker(t, srv.URL(), time.Minute)
	holder := mustAcquire(ctx, t, l, locktest.Request("sync", "run-h", "host-h", locktest.SlotAt(3)))
	k := l.keys("orders")
	slotKey := l.slotKey("orders", "sync")
	const stranger = "0123456789abcdef0123456789abcdef"
	scripts := []struct {
		name string
		run  func() (int64, error)
	}{
		{"renew", func() (int64, error) {
			return renewScript.Run(ctx, raw, []string{k.lock, k.holder}, stranger, "1000", "1000").Int64()
		}},
		{"release", func() (int64, error) {
			return releaseScript.Run(ctx, raw, []string{k.lock}, stranger).Int64()
		}},
		{"set pid", func() (int64, error) {
			return setPIDScript.Run(ctx, raw, []string{k.lock, k.holder, slotKey},
				stranger, `{"pid":1,"run_id":"intruder"}`, "", "1000").Int64()
		}},
	}
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			if n, err := sc.run(); n != 0 || err != nil {
				t.Fatalf("script = %d, %v; want 0 (refused)", n, err)
			}
			tok, err := raw.Get(ctx, k.lock).Result()
			if err != nil || tok != holder.token {
				t.Fatalf("lock token %q (%v), want the holder's", tok, err)
			}
			if left := raw.PTTL(ctx, k.lock).Val(); left < 30*time.Second {
				t.Fatalf("PTTL %s, want the holder's minute, not the stranger's second", left)
			}
			if st, err := l.Inspect(ctx, "orders"); err != nil || st.Record.RunID != "run-h" {
				t.Fatalf("Inspect = %+v, %v; want the holder's record", st, err)
			}
		})
	}
	t.Run("lock key set outside cronvisor", func(t *testing.T) {
		if err := raw.Set(ctx, "cronvisor:lock:other", stranger, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		_, err := l.Acquire(ctx, lock.Request{Name: "other", Record: lock.Record{Holder: run.Holder{Job: "sync", RunID: "r"}}})
		var held *lock.HeldError
		if !errors.As(err, &held) || !held.Record.Foreign {
			t.Fatalf("Acquire: %v, want a lock.HeldError with a foreign holder", err)
		}
		if st, err := l.Inspect(ctx, "other"); err != nil || !st.Held || !st.Record.Foreign {
			t.Fatalf("Inspect = %+v, %v; want held by a foreign holder", st, err)
		}
	})
}

func TestRedisOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: waits out a Redis outage and lease TTLs; runs in the full suite")
	}
	t.Parallel()
	const ttl = time.Second
	srv := redistest.New(t)
	ctx := locktest.Context(t, 15*time.Second)
	l := newRedisLocker(t, srv.URL(), ttl)
	lease := mustAcquire(ctx, t, l, locktest.Request("sync", "run-a", "host-a", time.Time{}))
	srv.Stop()
	stopped := time.Now()
	select {
	case <-lease.Lost():
		d := time.Since(stopped)
		t.Logf("lease declared lost %s after Redis stopped", d)
		if d > ttl {
			t.Fatalf("lease declared lost %s after Redis stopped, want within the ttl %s", d, ttl)
		}
	case <-time.After(2 * ttl):
		t.Fatal("lease not declared lost while Redis is down")
	}
	fresh := newRedisLocker(t, srv.URL(), ttl) // never connected
	calls := []struct {
		name string
		call func() error
	}{
		{"Acquire", func() error {
			_, err := l.Acquire(ctx, locktest.Request("sync", "r", "h", locktest.SlotAt(1)))
			return err
		}},
		{"Acquire on a fresh locker", func() error {
			_, err := fresh.Acquire(ctx, locktest.Request("sync", "r", "h", locktest.SlotAt(1)))
			return err
		}},
		{"Inspect", func() error { _, err := l.Inspect(ctx, "orders"); return err }},
		{"List", func() error { _, err := fresh.List(ctx); return err }},
		{"ClockSkew", func() error { _, err := l.ClockSkew(ctx); return err }},
		{"Release", lease.Release},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			err := c.call()
			if d := time.Since(start); !errors.Is(err, lock.ErrUnavailable) || d >= 2*time.Second {
				t.Fatalf("%s after %s, want lock.ErrUnavailable within 2s", err, d)
			}
		})
	}
	t.Run("Acquire after restart", func(t *testing.T) {
		srv.Start() // without persistence: every key is gone
		for {
			next, err := l.Acquire(ctx, locktest.Request("sync", "run-b", "host-a", locktest.SlotAt(1)))
			if err == nil {
				_ = next.Release()
				if old, tok := lease.fence, next.FencingToken; tok <= old {
					t.Fatalf("fencing token %d after Redis lost its data, want > %d", tok, old)
				}
				return
			}
			if !errors.Is(err, lock.ErrUnavailable) {
				t.Fatalf("Acquire after restart: %v", err)
			}
			select {
			case <-ctx.Done():
				t.Fatal("Acquire still failing after Redis restarted")
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

func TestNewRedisLockerErrors(t *testing.T) {
	tests := []struct {
		name string
		url  string
		ttl  time.Duration
		opts []RedisOption
		want string // substring of the error; "" for success
	}{
		{"redis url", "redis://127.0.0.1:1/0", time.Second, nil, ""},
		{"rediss (TLS) url", "rediss://user:secret@127.0.0.1:1/2", time.Second, nil, ""},
		{"wrong scheme", "http://127.0.0.1:1", time.Second, nil, "invalid redis url"},
		{"unparsable url keeps its password", "redis://user:secret@127.0.0.1:port/0", time.Second, nil, "invalid redis url"},
		{"ttl too short", "redis://127.0.0.1:1/0", 10 * time.Millisecond, nil, "shorter than"},
		{"retention below ttl", "redis://127.0.0.1:1/0", time.Minute, []RedisOption{WithRetention(time.Second)}, "retention"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewRedisLocker(tc.url, tc.ttl, tc.opts...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("NewRedisLocker: %v", err)
				}
				_ = l.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") {
				t.Fatalf("NewRedisLocker: %v, want an error about %q that hides the password", err, tc.want)
			}
		})
	}
}
