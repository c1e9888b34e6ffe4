package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// alerts measures what notifications and metrics cost the scheduler: each
// rep runs the lateness scenario on a plain daemon and on one with
// metrics on and every job notifying a local webhook at start and
// success (two deliveries per fire), alternating so that both see the
// same machine.
func alerts(o options, w io.Writer) error {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
	}))
	defer srv.Close()
	var plain, alerted []latencyRun
	for rep := range o.reps {
		p, err := runCronvisor(o, rep, nil)
		if err != nil {
			return err
		}
		p.label = fmt.Sprintf("plain #%d", rep+1)
		withAlerts := o
		withAlerts.alerts = alertsConfig(srv.URL)
		a, err := runCronvisor(withAlerts, rep, nil)
		if err != nil {
			return err
		}
		a.label = fmt.Sprintf("alerts #%d", rep+1)
		plain, alerted = append(plain, p), append(alerted, a)
	}
	fmt.Fprintf(w, "alerts: %d job(s) every second, plain daemon vs metrics on and a webhook at start and success; window %v after %v warm-up, %d rep(s); times in ms\n",
		o.jobs, o.duration, o.warmup, o.reps)
	printPairs(w, plain, alerted)
	printComparison(w, plain, alerted, "plain", "alerts", "alerts/plain", "daemon cpu/fire")
	fmt.Fprintf(w, "webhook deliveries received: %d\n", got.Load())
	return nil
}

// alertsConfig is the defaults' notify target at url and the top-level
// metrics block, for writeJobs; "" without a url.
func alertsConfig(url string) string {
	if url == "" {
		return ""
	}
	return "  notify:\n    - on: [start, success]\n      url: " + url + "/hook\nmetrics:\n  listen: 127.0.0.1:0\n"
}
