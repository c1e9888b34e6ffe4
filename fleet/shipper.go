package fleet

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"cronvisor/history"
	"cronvisor/internal/ratelog"
	"cronvisor/run"
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
	backoffFirst = time.Second            // after a failed round, doubling
	backoffMax   = 10 * time.Second
	lastFlush    = 2 * time.Second // Close's bound on its last round
	shipBatch    = 500             // outbox rows read per transaction
)

// Shipper copies the local store's outbox to the shared store in one
// goroutine of its own: every shipEvery, and at once after a Nudge. While
// the shared store fails, the records stay in the local outbox and the
// rounds back off; the failure is logged at most once a minute.
type Shipper struct {
	local  Outbox
	remote Remote
	log    *slog.Logger
	rate   *ratelog.Limiter
	nudge  chan struct{}
	stop   context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex // serialises rounds: the loop's and Close's last
	failed bool       // the last round failed (to log its recovery)
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
	s.rate = ratelog.New(s.log, ratelog.Every)
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
	err := s.round(ctx)
	s.rate.Close()
	return err
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
		wait := shipEvery
		if err := s.round(ctx); err != nil && ctx.Err() == nil {
			backoff = min(max(2*backoff, backoffFirst), backoffMax)
			wait = backoff
		} else {
			backoff = 0
		}
		t.Reset(wait)
	}
}

// round ships the schedules' new versions, then the whole outbox, a
// batch per transaction.
func (s *Shipper) round(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.shipSchedules(ctx)
	for {
		more := false
		if err == nil {
			more, err = s.batch(ctx)
		}
		if err != nil {
			if ctx.Err() == nil {
				s.failed = true
				s.rate.Log("ship", slog.LevelWarn, "history backend: cannot ship to the shared history; records wait in the local store and ship when it is back", "err", err)
			}
			return err
		}
		if s.failed {
			s.failed = false
			s.log.Info("history backend: shipping to the shared history again")
		}
		if !more {
			return nil
		}
	}
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
