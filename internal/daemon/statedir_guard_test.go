package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
	"cronvisor/internal/store/history"
)

// mended is the record the guard ends a mend with.
const mended = "the state dir is made again"

// notifyHandler is the trace's handler that also tells each mend on
// msgs, so a test waits for it rather than polls.
type notifyHandler struct {
	traceHandler
	msgs chan string
}

func (h notifyHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == mended {
		select {
		case h.msgs <- r.Message:
		default:
		}
	}
	return h.traceHandler.Handle(ctx, r)
}

// waitMended waits up to 10 s for the guard's mend.
func waitMended(t *testing.T, msgs <-chan string) {
	t.Helper()
	select {
	case <-msgs:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %q logged within 10 s", mended)

	}
}

// TestGuardMendsADeletedStateDir: the state dir deleted under a daemon,
// twice, is logged (ERROR, naming it), made again 0700 with the socket
// bound again, and the history the daemon holds is back at its path with
// every record; every socket is closed at shutdown.
func TestGuardMendsADeletedStateDir(t *testing.T) {
	h := newHarness(t, oneJob)
	msgs := make(chan string, 64)
	h.opts.Log = slog.New(notifyHandler{traceHandler{h.tr}, msgs})
	d := h.start()
	state := filepath.Join(h.dir, "state")
	for i := range 3 {
		at := time.Now()
		if err := d.env.Store.Finish(context.Background(), run.Record{Job: "nap", RunID: fmt.Sprint("r", i), Outcome: run.OK, ScheduledAt: at, StartedAt: at, EndedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // the guard watches the dir made again too
		if err := os.RemoveAll(state); err != nil {
			t.Fatal(err)
		}
		waitMended(t, msgs)
	}
	errs := h.tr.logged("the state dir was deleted under the running daemon; making it again, with its socket, its lock and the history this daemon holds")
	if len(errs) != 2 || errs[0]["level"] != "ERROR" || errs[0]["state_dir"] != state {
		t.Errorf("deletion records: %v; want two ERRORs naming %s", errs, state)
	}
	if fi, err := os.Stat(state); err != nil || fi.Mode() != os.ModeDir|0o700 {
		t.Errorf("state dir made again: %v, %v; want a dir 0700", fi, err)
	}
	if c, err := net.Dial("unix", filepath.Join(state, "cronvisor.sock")); err != nil {
		t.Errorf("socket bound again: %v", err)
	} else {
		c.Close()
	}
	ro, err := history.OpenReadOnly(filepath.Join(state, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ro.Query(context.Background(), history.Filter{})
	ro.Close()
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.RunID)
	}
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, []string{"r0", "r1", "r2"}) {
		t.Errorf("history at the path after the mend: %v, %v; want r0, r1, r2", ids, err)
	}
	d.Shutdown(context.Canceled)
	if n := len(slices.DeleteFunc(h.tr.prefixed("closed "), func(s string) bool { return s != "closed listener" })); n != 3 {
		t.Errorf("%d listeners closed at shutdown, want the first and the two bound again", n)
	}
}

// TestGuardSaysWhenAnotherDaemonTookTheDir: when the socket cannot be
// bound again because another daemon took the path meanwhile, the guard
// says so, and the daemon goes on.
func TestGuardSaysWhenAnotherDaemonTookTheDir(t *testing.T) {
	h := newHarness(t, oneJob)
	msgs := make(chan string, 64)
	h.opts.Log = slog.New(notifyHandler{traceHandler{h.tr}, msgs})
	listen, calls := h.opts.Listen, atomic.Int32{}
	h.opts.Listen = func(path string) (net.Listener, error) {
		if calls.Add(1) > 1 {
			return nil, fmt.Errorf("%w: %s is locked by a running daemon", ctl.ErrInUse, path)
		}
		return listen(path)
	}
	d := h.start()
	if err := os.RemoveAll(filepath.Join(h.dir, "state")); err != nil {
		t.Fatal(err)
	}
	waitMended(t, msgs)
	if got := h.tr.logged("another daemon took the state dir while it was gone; two daemons now supervise it"); len(got) != 1 || got[0]["level"] != "ERROR" {
		t.Errorf("records of the taken socket: %v; want one ERROR", got)
	}
	d.Shutdown(nil)
}
