package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// Outbox is the local store's side of shipping (a *history.Store with
// shipping on): the runs written since they were last shipped, and the
// removal of what was shipped.
type Outbox interface {
	Pending(ctx context.Context, limit int) (ships []history.Shipment, last int64, err error)
	Shipped(ctx context.Context, seq int64) error
}

// Remote is the shared store's side of shipping (a *Store).
type Remote interface {
	Upsert(ctx context.Context, recs []run.Record) error
}

// Shipping's pace.
const (
	shipEvery    = 250 * time.Millisecond // between rounds while they succeed
	stepTimeout  = 5 * time.Second        // each transaction of a round, and its outbox reads
	backoffFirst = time.Second            // from a failed round's start to the next, doubling
	backoffMax   = 10 * time.Second
	warnEvery    = time.Minute     // between two warnings that shipping fails
	lastFlush    = 2 * time.Second // Close's bound on its last round
	shipBatch    = 500             // outbox rows read per transaction
)

// ConnDropper is a Remote whose pooled connections can be closed (a
// *Store): after a failed round they may be half-open, and the next
// round dials afresh instead.
type ConnDropper interface{ DropIdleConns() }

// Shipper copies the local store's outbox to the shared store in one
// goroutine of its own: every shipEvery, and at once after a Nudge. Each
// transaction of a round has stepTimeout to finish; a round that fails
// drops the remote's idle connections, and the next one starts
// backoffFirst after it began, doubling to backoffMax, so that shipping
// resumes within backoffMax of the server answering again. Meanwhile the
// records stay in the local outbox. The failure is logged when it starts
// (at most once a minute) and again each minute it lasts, always by the
// round that failed, and the recovery once: no warning outlives it.
type Shipper struct {
	local  Outbox
	remote Remote
	log    *slog.Logger
	nudge  chan struct{}
	stop   context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex // serialises rounds: the loop's and Close's last
	down   time.Time  // the first failed round of the current failure; zero while shipping works
	rounds int        // failed rounds since down
	warned time.Time  // the last warning
	said   bool       // the current failure was logged (so its end is)
}

// ShipperOption gives a Shipper an optional part.
type ShipperOption func(*Shipper)

// WithShipperLog logs the shipping failures and recoveries to log
// (default: discarded).
func WithShipperLog(log *slog.Logger) ShipperOption { return func(s *Shipper) { s.log = log } }

// NewShipper starts shipping local's outbox to remote until Close.
func NewShipper(local Outbox, remote Remote, opts ...ShipperOption) *Shipper {
	s := &Shipper{local: local, remote: remote, log: slog.New(slog.DiscardHandler),
		nudge: make(chan struct{}, 1), done: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go func() { defer close(s.done); s.loop(ctx) }()
	return s
}

// Nudge asks for a round now (a record was just written); it never
// blocks, and a shipper backing off after a failure waits its turn.
func (s *Shipper) Nudge() {
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// Close stops the loop, ships what the outbox holds in one last round of
// at most lastFlush, and returns. What is left ships at the next start.
func (s *Shipper) Close() error {
	s.stop()
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), lastFlush)
	defer cancel()
	return s.round(ctx)
}

func (s *Shipper) loop(ctx context.Context) {
	var backoff time.Duration
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		nudge := s.nudge
		if backoff > 0 {
			nudge = nil // a nudge does not cut a backoff short
		}
		select {
		case <-ctx.Done():
			return
		case <-nudge:
			t.Stop()
		case <-t.C:
		}
		began := time.Now()
		wait := shipEvery
		if err := s.round(ctx); err != nil && ctx.Err() == nil {
			backoff = min(max(2*backoff, backoffFirst), backoffMax)
			wait = max(backoff-time.Since(began), 0)
		} else {
			backoff = 0
		}
		t.Reset(wait)
	}
}

// round ships the schedules' new versions, then the whole outbox, a
// batch per transaction, each within stepTimeout.
func (s *Shipper) round(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.step(ctx, func(ctx context.Context) (bool, error) { return false, s.shipSchedules(ctx) })
	for more := err == nil; more; {
		more, err = s.step(ctx, s.batch)
	}
	switch {
	case err == nil:
		s.recovered()
	case ctx.Err() == nil:
		s.failed(err)
		if d, ok := s.remote.(ConnDropper); ok {
			d.DropIdleConns()
		}
	}
	return err
}

// step runs f within stepTimeout, naming the deadline when it was what
// ended f.
func (s *Shipper) step(ctx context.Context, f func(context.Context) (bool, error)) (bool, error) {
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	more, err := f(sctx)
	if err != nil && ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %v: %w", stepTimeout, err)
	}
	return more, err
}

// failed notes a failed round, and logs it when the failure starts or
// has gone on for warnEvery since the last warning.
func (s *Shipper) failed(err error) {
	now := time.Now()
	if s.down.IsZero() {
		s.down, s.rounds = now, 0
	}
	s.rounds++
	if !s.warned.IsZero() && now.Sub(s.warned) < warnEvery {
		return
	}
	s.warned, s.said = now, true
	s.log.Warn("history backend: cannot ship to the shared history; records wait in the local store and ship when it is back",
		"err", err, "since", s.down.UTC().Format(time.RFC3339), "failed_rounds", s.rounds)
}

// recovered notes a round that shipped, and logs the end of a failure
// that was logged.
func (s *Shipper) recovered() {
	if s.down.IsZero() {
		return
	}
	if s.said {
		s.log.Info("history backend: shipping to the shared history again",
			"after", time.Since(s.down).Round(time.Millisecond).String(), "failed_rounds", s.rounds)
	}
	s.down, s.rounds, s.said = time.Time{}, 0, false
}

// batch ships up to shipBatch outbox rows; more is false when the
// outbox was empty.
func (s *Shipper) batch(ctx context.Context) (more bool, err error) {
	ships, last, err := s.local.Pending(ctx, shipBatch)
	if err != nil || last == 0 {
		return false, err
	}
	recs := make([]run.Record, len(ships))
	for i, sh := range ships {
		recs[i] = sh.Record
	}
	if err := s.remote.Upsert(ctx, recs); err != nil {
		return false, err
	}
	if err := s.local.Shipped(ctx, last); err != nil {
		return false, err
	}
	return true, nil
}
