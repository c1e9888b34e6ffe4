// Package notify tells someone what happened to a job: notification
// targets (webhooks and commands) and monitor pings in the healthchecks.io
// scheme. It is a lossy observer of the runner's events: Handle does a
// few map updates on the emitting goroutine and hands each delivery to
// its target's bounded queue, which one owned goroutine per target
// empties with a timeout and retries per delivery. A full queue drops the
// delivery (logged and counted); nothing here ever waits on a network or
// a child process on the runner's path.
//
// New takes what a Notifier cannot work without as parameters and the
// rest as WithX options (the tree's convention): the delivery counter
// too, so nothing is wired after construction.
package notify

import (
	"encoding/json"
	"strconv"
	"time"

	"cronvisor/internal/base/run"
)

// Payload is one notification: the webhook's JSON body, field for field
// as docs/notifications.md documents it, and the CRONVISOR_* variables
// of a command target.
type Payload struct {
	Event               string    `json:"event"`
	Job                 string    `json:"job"`
	RunID               string    `json:"run_id"`
	Host                string    `json:"host"`
	Outcome             string    `json:"outcome"`
	ExitCode            *int      `json:"exit_code"`
	Reason              string    `json:"reason"`
	Holder              *Holder   `json:"holder"`
	ScheduledAt         string    `json:"scheduled_at"`
	StartedAt           string    `json:"started_at"`
	EndedAt             string    `json:"ended_at"`
	DurationMS          int64     `json:"duration_ms"`
	Attempt             int       `json:"attempt"`
	ConsecutiveFailures int       `json:"consecutive_failures"`
	OutputTail          string    `json:"output_tail"`
	at                  time.Time // when the event happened, for logs
}

// Holder is the webhook body's holder: run.Holder without since, as the
// contract lists the body's fields.
type Holder struct {
	PID   int    `json:"pid"`
	Host  string `json:"host"`
	Job   string `json:"job"`
	RunID string `json:"run_id"`
}

func holderOf(h *run.Holder) *Holder {
	if h == nil {
		return nil
	}
	return &Holder{PID: h.PID, Host: h.Host, Job: h.Job, RunID: h.RunID}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

// Env is the payload as CRONVISOR_* variables, for a command target (the
// output tail goes to its stdin instead).
func (p Payload) Env() []string {
	exit := ""
	if p.ExitCode != nil {
		exit = strconv.Itoa(*p.ExitCode)
	}
	holder := ""
	if p.Holder != nil {
		b, _ := json.Marshal(p.Holder)
		holder = string(b)
	}
	return []string{
		"CRONVISOR_EVENT=" + p.Event,
		"CRONVISOR_JOB=" + p.Job,
		"CRONVISOR_RUN_ID=" + p.RunID,
		"CRONVISOR_HOST=" + p.Host,
		"CRONVISOR_OUTCOME=" + p.Outcome,
		"CRONVISOR_EXIT_CODE=" + exit,
		"CRONVISOR_REASON=" + p.Reason,
		"CRONVISOR_HOLDER=" + holder,
		"CRONVISOR_SCHEDULED_AT=" + p.ScheduledAt,
		"CRONVISOR_STARTED_AT=" + p.StartedAt,
		"CRONVISOR_ENDED_AT=" + p.EndedAt,
		"CRONVISOR_DURATION_MS=" + strconv.FormatInt(p.DurationMS, 10),
		"CRONVISOR_ATTEMPT=" + strconv.Itoa(p.Attempt),
		"CRONVISOR_CONSECUTIVE_FAILURES=" + strconv.Itoa(p.ConsecutiveFailures),
	}
}

// tailLimit bounds the output a notification or ping carries: the end of
// the run's output, where the error usually is.
const tailLimit = 4096

// tail keeps the last tailLimit bytes of a run's output.
type tail struct{ buf []byte }

func (t *tail) add(lines string) {
	t.buf = append(t.buf, lines...)
	t.buf = append(t.buf, '\n')
	if over := len(t.buf) - tailLimit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
}

func (t *tail) String() string {
	if t == nil {
		return ""
	}
	return string(t.buf)
}

func itoa(n int) string { return strconv.Itoa(n) }
