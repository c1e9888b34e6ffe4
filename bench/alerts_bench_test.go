package bench

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/observe/metrics"
	"cronvisor/internal/observe/notify"
)

// BenchmarkFireToExecAlerts is BenchmarkFireToExec's span for a rig as
// the daemon wires it with metrics on and a webhook target (start and
// success, to a local server), beside a plain rig, one fire of each per
// iteration so that both see the same machine.
func BenchmarkFireToExecAlerts(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	plain, alerted := newRig(b, true, run.DurabilityMachine), newRig(b, true, run.DurabilityMachine)
	job := trueJob("job")
	withHook := job
	withHook.Notify = []config.Target{{On: config.EventStart | config.EventSuccess, URL: srv.URL, AfterSkips: 1}}
	m := metrics.New(metrics.Sources{})
	n := notify.New(func(string) (config.Job, bool) { return withHook, true },
		slog.New(slog.DiscardHandler), notify.WithCounter(m.Delivered))
	alerted.fan.Listen(m.Handle)
	alerted.fan.Listen(n.Handle)
	defer n.Close(5 * time.Second)
	var slotP, slotA = time.Now(), time.Now()
	var ps, as []time.Duration
	for b.Loop() {
		for _, c := range []struct {
			r    *rig
			job  config.Job
			slot *time.Time
			out  *[]time.Duration
		}{{plain, job, &slotP, &ps}, {alerted, withHook, &slotA, &as}} {
			t0 := time.Now()
			if f := c.r.fire(c.job, c.slot); f.Outcome != run.OK {
				b.Fatalf("outcome %s: %s", f.Outcome, f.Reason)
			}
			*c.out = append(*c.out, (<-c.r.started).Sub(t0))
		}
	}
	mp, ma := medianOf(ps), medianOf(as)
	b.ReportMetric(float64(mp)/float64(time.Microsecond), "plain-µs")
	b.ReportMetric(float64(ma)/float64(time.Microsecond), "alerts-µs")
	b.ReportMetric(float64(ma)/float64(mp), "ratio")
}
