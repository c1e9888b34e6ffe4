package sql

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// sessionID tells one server session apart from every other, also from
// a later session given the same id: the id (pg_backend_pid(),
// CONNECTION_ID()), the TCP port at the client's end (0 over a Unix
// socket) and the address the server sees as "ip:port" (MySQL's
// PROCESSLIST.HOST), and, on PostgreSQL, the backend's start in
// microseconds since the epoch.
type sessionID struct {
	ID    int64
	Port  int
	Addr  string
	Start int64
}

// staleSession is the session of a lease lost because its connection
// stopped answering (a partition, a dead route): the server may keep
// it, and with it the lock, until its TCP keep-alive gives up, which on
// MySQL takes hours by default. Ended by this locker once the server
// answers again; only after the lease's Release, so never before its
// run is over.
type staleSession struct {
	sessionID
	key  string    // the server key it holds
	lost time.Time // when it was handed to the reaper
}

// staleGiveUp is how long a stale session is looked for: past it even
// the operating systems' default TCP keep-alive (2 h 11 min) has ended it.
const staleGiveUp = 3 * time.Hour

// reaper ends a locker's stale sessions: one goroutine, started when
// there is one to end and gone once none is left, owned by the locker
// (close stops it and waits).
type reaper struct {
	mu      sync.Mutex
	pending []staleSession
	running bool
	closed  bool
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
	// ended counts the sessions ended, for the tests.
	ended atomic.Int64
}

func newReaper() reaper {
	ctx, stop := context.WithCancel(context.Background())
	return reaper{ctx: ctx, stop: stop}
}

// close stops the goroutine and waits for it.
func (r *reaper) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stop()
	r.wg.Wait()
}

// endStale hands s to the reaper, which tries every keep-alive period
// until the server answers.
func (l *sqlLocker) endStale(s staleSession) {
	if s.ID == 0 || s.Port <= 0 {
		return // a Unix socket cannot be cut off: the server sees its end
	}
	r := &l.stale
	s.lost = time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.pending = append(r.pending, s)
	if r.running {
		return
	}
	r.running = true
	r.wg.Add(1)
	go l.reapLoop()
}

func (l *sqlLocker) reapLoop() {
	r := &l.stale
	defer r.wg.Done()
	t := time.NewTicker(l.keepAlive)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
		if !l.reapOnce() {
			return
		}
	}
}

// reapOnce tries each pending session once; false when none is left
// (the goroutine then ends, and the next endStale starts another).
func (l *sqlLocker) reapOnce() bool {
	r := &l.stale
	r.mu.Lock()
	list := append([]staleSession(nil), r.pending...)
	r.mu.Unlock()
	var keep []staleSession
	for _, s := range list {
		if time.Since(s.lost) > staleGiveUp {
			continue
		}
		ctx, cancel := l.opCtx(r.ctx)
		ended, err := l.d.endStale(ctx, l.db, s)
		cancel()
		switch {
		case err != nil && l.d.transient(err):
			keep = append(keep, s) // not reachable yet: the next round
		case ended:
			r.ended.Add(1)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(keep, r.pending[len(list):]...)
	if len(r.pending) == 0 || r.closed {
		r.running = false
		return false
	}
	return true
}
