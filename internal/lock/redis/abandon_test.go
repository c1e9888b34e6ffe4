package redis

import (
	"errors"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
)

// silentServer accepts connections and never answers (what is sent
// waits in the socket buffers): a Redis whose replies are lost. It is closed, with its connections, when
// the test ends.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// abandoning counts the goroutines running RedisLocker.abandon, as this
// moment's stacks show them.
func abandoning() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "redis.(*RedisLocker).abandon(")
}

// An Acquire whose request was sent but never answered leaves an abandon
// running (the script may have taken the lock); Close returns only once
// it has ended.
func TestRedisCloseWaitsForAbandon(t *testing.T) {
	if n := abandoning(); n != 0 {
		t.Fatalf("%d abandon calls running before the test", n)
	}
	addr := silentServer(t)
	before := goleak.IgnoreCurrent()
	// No retries: one read timeout each for the Acquire and its abandon.
	l, err := NewRedisLocker("redis://"+addr+"/0?max_retries=-1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(locktest.Context(t, 5*time.Second), locktest.Request("sync", "run-1", "host-a", locktest.SlotAt(1)))
	if !errors.Is(err, lock.ErrUnavailable) {
		t.Fatalf("Acquire on a server that never answers: %v, want lock.ErrUnavailable", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for abandoning() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no abandon running after the unanswered Acquire")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := abandoning(); n != 0 {
		t.Fatalf("Close returned with %d abandon calls still running", n)
	}
	goleak.VerifyNone(t, before)
}
