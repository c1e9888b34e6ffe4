package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// memOutbox is an outbox in memory: records to ship, in order.
type memOutbox struct {
	mu      sync.Mutex
	recs    []run.Record
	shipped int // how many of recs were shipped
}

func (o *memOutbox) add(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.recs = append(o.recs, run.Record{Job: "j", RunID: id, Outcome: run.OK})
}

func (o *memOutbox) Pending(_ context.Context, limit int) ([]history.Shipment, int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []history.Shipment
	for i := o.shipped; i < len(o.recs) && len(out) < limit; i++ {
		out = append(out, history.Shipment{Seq: int64(i + 1), Record: o.recs[i]})
	}
	if len(out) == 0 {
		return nil, 0, nil
	}
	return out, out[len(out)-1].Seq, nil
}

func (o *memOutbox) Shipped(_ context.Context, seq int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.shipped = int(seq)
	return nil
}

func (o *memOutbox) left() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.recs) - o.shipped
}

// remoteMode is how a fakeRemote answers.
type remoteMode int

const (
	answer remoteMode = iota // takes the records
	refuse                   // fails at once (a server that is down)
	hang                     // never answers (a half-open connection): until the deadline
)

// fakeRemote is a shared store whose answer the test sets; it notes
// when each call began and how often its connections were dropped.
type fakeRemote struct {
	mu      sync.Mutex
	mode    remoteMode
	calls   []time.Time
	got     []string
	dropped int
}

func (r *fakeRemote) set(m remoteMode) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mode = m
}

func (r *fakeRemote) Upsert(ctx context.Context, recs []run.Record) error {
	r.mu.Lock()
	r.calls = append(r.calls, time.Now())
	mode := r.mode
	r.mu.Unlock()
	switch mode {
	case refuse:
		return errors.New("connection refused")
	case hang:
		<-ctx.Done()
		return ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range recs {
		r.got = append(r.got, rec.RunID)
	}
	return nil
}

func (r *fakeRemote) DropIdleConns() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropped++
}

func (r *fakeRemote) drops() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

func (r *fakeRemote) shipped() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// callsSince is when each call began, as offsets from t0.
func (r *fakeRemote) callsSince(t0 time.Time) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for _, c := range r.calls {
		out = append(out, c.Sub(t0))
	}
	return out
}

// logLine is one record a shipper logged, at its fake time.
type logLine struct {
	at    time.Duration // since the test's start
	level slog.Level
	msg   string
	err   string
}

// logTape keeps the records logged through it.
type logTape struct {
	t0    time.Time
	mu    *sync.Mutex
	lines *[]logLine
}

func newTape() logTape { return logTape{t0: time.Now(), mu: &sync.Mutex{}, lines: &[]logLine{}} }

func (l logTape) Enabled(context.Context, slog.Level) bool { return true }
func (l logTape) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := logLine{at: r.Time.Sub(l.t0), level: r.Level, msg: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			line.err = a.Value.String()
		}
		return true
	})
	*l.lines = append(*l.lines, line)
	return nil
}
func (l logTape) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logTape) WithGroup(string) slog.Handler      { return l }

func (l logTape) get() []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(*l.lines)
}

const (
	cannotShip  = "history backend: cannot ship to the shared history; records wait in the local store and ship when it is back"
	shipsAgain  = "history backend: shipping to the shared history again"
	noAnswerErr = "no answer within 5s"
)

// secs turns whole seconds into durations.
func secs(ss ...int) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = time.Duration(s) * time.Second
	}
	return out
}

// A failed round is tried again backoffFirst after it began, doubling to
// backoffMax, whether it failed at once (a server that refuses) or at
// its deadline (a half-open connection); every failure drops the idle
// connections; once the server answers, what waited ships at the next
// round, within backoffMax.
func TestShipperBackoffAndDeadline(t *testing.T) {
	for _, tt := range []struct {
		name  string
		mode  remoteMode
		calls []time.Duration // when each call of the first 50 s began
	}{
		{"refused", refuse, secs(0, 1, 3, 7, 15, 25, 35, 45)},
		// A round that hangs 5 s is followed at once while the backoff
		// is shorter than that, and then backs off from its start.
		{"half-open", hang, secs(0, 5, 10, 15, 23, 33, 43)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				out, remote := &memOutbox{}, &fakeRemote{mode: tt.mode}
				t0 := time.Now()
				out.add("r1")
				sh := NewShipper(out, remote)
				time.Sleep(50*time.Second - time.Nanosecond)
				synctest.Wait()
				if got := remote.callsSince(t0); !slices.Equal(got, tt.calls) {
					t.Errorf("calls began at %v, want %v", got, tt.calls)
				}
				if n := remote.drops(); n != len(tt.calls) {
					t.Errorf("idle connections dropped %d times, want once per failed round (%d)", n, len(tt.calls))
				}
				out.add("r2")
				healed := time.Now()
				remote.set(answer)
				for out.left() > 0 && time.Since(healed) < time.Minute {
					time.Sleep(100 * time.Millisecond)
				}
				if waited := time.Since(healed); out.left() > 0 || waited > backoffMax {
					t.Errorf("%d records left %v after the server answered again, want none within %v", out.left(), waited, backoffMax)
				}
				if err := sh.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				if got := remote.shipped(); !slices.Equal(got, []string{"r1", "r2"}) {
					t.Errorf("shipped %v, want r1, r2 once each", got)
				}
			})
		})
	}
}

// ms is a fake-clock instant in milliseconds.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// A failure is logged when it starts and each minute it lasts, by the
// round that failed, and its end once; nothing is logged after the end,
// and a failure within a minute of the last warning is not logged again.
func TestShipperWarnsTheCurrentState(t *testing.T) {
	type event struct {
		at   time.Duration
		mode remoteMode
		add  bool // a record to ship instead of a mode change
	}
	warn := func(at time.Duration, err string) logLine {
		return logLine{at: at, level: slog.LevelWarn, msg: cannotShip, err: err}
	}
	again := func(at time.Duration) logLine { return logLine{at: at, level: slog.LevelInfo, msg: shipsAgain} }
	for _, tt := range []struct {
		name   string
		start  remoteMode
		events []event
		end    time.Duration
		want   []logLine
	}{
		{"a long outage", refuse, []event{{at: ms(150500), mode: answer}, {at: ms(160000), add: true}}, ms(200000),
			[]logLine{warn(0, "connection refused"), warn(ms(65000), "connection refused"),
				warn(ms(125000), "connection refused"), again(ms(155000))}},
		{"a half-open connection", hang, []event{{at: ms(20500), mode: answer}}, ms(60000),
			[]logLine{warn(ms(5000), noAnswerErr+": context deadline exceeded"), again(ms(23000))}},
		{"a flapping server", refuse, []event{{at: ms(2500), mode: answer},
			{at: ms(10500), mode: refuse}, {at: ms(11100), add: true}, {at: ms(20500), mode: answer},
			{at: ms(70500), mode: refuse}, {at: ms(71100), add: true}, {at: ms(80500), mode: answer}}, ms(100000),
			[]logLine{warn(0, "connection refused"), again(ms(3000)),
				warn(ms(71250), "connection refused"), again(ms(86250))}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tape := newTape()
				out, remote := &memOutbox{}, &fakeRemote{mode: tt.start}
				out.add("r0")
				sh := NewShipper(out, remote, WithShipperLog(slog.New(tape)))
				for i, e := range tt.events {
					time.Sleep(e.at - time.Since(tape.t0))
					if e.add {
						out.add(fmt.Sprint("r", i+1))
					} else {
						remote.set(e.mode)
					}
				}
				time.Sleep(tt.end - time.Since(tape.t0))
				if err := sh.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				if got := tape.get(); !slices.Equal(got, tt.want) {
					t.Errorf("logged\n%v\nwant\n%v", got, tt.want)
				}
				if out.left() > 0 {
					t.Errorf("%d records left", out.left())
				}
			})
		})
	}
}
