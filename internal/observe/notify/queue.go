package notify

import (
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"time"

	"cronvisor/internal/base/mask"
	"cronvisor/internal/config"
)

// Handing messages to their targets' senders: one queue per target (a
// webhook URL and its headers, a command, a ping URL), its results
// counted and logged.

// send queues p for target t of job.
func (n *Notifier) send(job string, t config.Target, p Payload) {
	m := message{job: job, event: p.Event}
	if t.Command != nil {
		m.argv, m.env, m.stdin = t.Command, p.Env(), p.OutputTail
		n.offer("command", "c:"+strings.Join(t.Command, "\x00"), m)
		return
	}
	m.method, m.url, m.body = http.MethodPost, t.URL, mustJSON(p)
	m.header = map[string]string{"Content-Type": "application/json", "User-Agent": "cronvisor"}
	maps.Copy(m.header, t.Headers)
	n.offer("webhook", "w:"+t.URL+"\x00"+headerKey(t.Headers), m)
}

// ping sends the healthchecks.io-scheme ping kind ("" for success) of a
// run to the job's ping URL; one queue per URL keeps a run's pings in
// order.
func (n *Notifier) ping(job config.Job, kind, runID string, body []byte) {
	if job.Ping == "" {
		return
	}
	u := job.Ping
	if kind != "" {
		u += "/" + kind
	}
	u += "?rid=" + runID
	ev := kind
	if ev == "" {
		ev = "success"
	}
	n.offer("ping", "p:"+job.Ping, message{job: job.Name, event: ev, method: http.MethodPost, url: u, body: body,
		header: map[string]string{"User-Agent": "cronvisor", "Content-Type": "text/plain; charset=utf-8"}})
}

// offer queues m on the target's sender, starting it on first use; a
// full queue drops m. Called with n.mu held.
func (n *Notifier) offer(kind, key string, m message) {
	s := n.senders[key]
	if s == nil {
		s = newSender(n.ctx, kind, n.policy, n.client, n.log, n.result)
		n.senders[key] = s
	}
	if !s.offer(m) {
		n.record(kind, m, ResultDropped, errQueueFull)
	}
}

// result is a sender's report of a delivery.
func (n *Notifier) result(kind string, m message, result string, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.record(kind, m, result, err)
}

// record logs a delivery that did not succeed, counts every one, and
// keeps the newest per job for status. Called with n.mu held.
func (n *Notifier) record(kind string, m message, result string, err error) {
	if n.counted != nil {
		n.counted(kind, result)
	}
	last := Last{Event: m.event, Result: result, At: time.Now()}
	if err != nil {
		last.Err = err.Error()
		// A target that is down fails every delivery: one record a
		// minute per target, with the count of the others.
		n.failures.Log(targetKey(kind, m), slog.LevelWarn, "notification not delivered", "kind", kind, "job", m.job,
			"event", m.event, "result", result, "target", target(m), "err", err.Error())
	}
	st := n.jobsSt[m.job]
	if st == nil {
		return
	}
	switch {
	case kind != "ping":
		st.notified = last
	case result != ResultOK:
		st.pinged = last
	}
}

func target(m message) string {
	if m.argv != nil {
		return m.argv[0]
	}
	return mask.URL(m.url)
}

// targetKey tells targets apart for the failure log's rate limit: two
// URLs that mask.URL shows alike (two healthchecks checks) are two, and a
// job's pings (/start, /fail, ... with each run's rid) are one.
func targetKey(kind string, m message) string {
	switch {
	case m.argv != nil:
		return kind + "\x00" + strings.Join(m.argv, "\x00")
	case kind == "ping":
		return kind + "\x00" + m.job
	}
	return kind + "\x00" + m.url
}
