package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"cronvisor/internal/base/mask"
)

// Results of one delivery, the label values of the deliveries metric.
const (
	ResultOK      = "ok"      // delivered, possibly after retries
	ResultFailed  = "failed"  // every try failed; logged, never retried again
	ResultDropped = "dropped" // its queue was full, or shutdown came first
)

// message is one delivery: what to send and how to describe it.
type message struct {
	job    string
	event  string // notification event, or the ping kind (start, success, fail, ...)
	method string // webhook and ping: the HTTP method
	url    string
	header map[string]string
	body   []byte
	argv   []string // command target
	env    []string
	stdin  string
}

// Policy is how a target delivers: per try a timeout, then tries with a
// doubling backoff.
type Policy struct {
	Timeout time.Duration
	Tries   int
	Backoff time.Duration
	Queue   int // deliveries waiting per target before new ones are dropped
}

// DefaultPolicy: a receiver down for a few seconds still gets the message.
// A constant in all but name (a struct cannot be one): nothing writes it;
// WithPolicy gives a Notifier another.
var DefaultPolicy = Policy{Timeout: 10 * time.Second, Tries: 4, Backoff: time.Second, Queue: 64}

// sender owns one target's queue and the goroutine that empties it.
type sender struct {
	kind   string // webhook, command or ping
	q      chan message
	policy Policy
	client *http.Client
	log    *slog.Logger
	report func(kind string, m message, result string, err error)
	done   chan struct{}
}

func newSender(ctx context.Context, kind string, p Policy, client *http.Client, log *slog.Logger,
	report func(string, message, string, error)) *sender {
	s := &sender{kind: kind, q: make(chan message, p.Queue), policy: p, client: client, log: log,
		report: report, done: make(chan struct{})}
	go s.loop(ctx)
	return s
}

// errQueueFull: a delivery offered while its target's queue is full.
var errQueueFull = errors.New("queue full")

// offer queues m without waiting; false when the queue is full.
func (s *sender) offer(m message) bool {
	select {
	case s.q <- m:
		return true
	default:
		return false
	}
}

// loop delivers until the queue is closed and empty. Once ctx is done
// (the bounded flush at shutdown ran out) what is left is dropped.
func (s *sender) loop(ctx context.Context) {
	defer close(s.done)
	for m := range s.q {
		if ctx.Err() != nil {
			s.report(s.kind, m, ResultDropped, ctx.Err())
			continue
		}
		err := s.deliver(ctx, m)
		switch {
		case err == nil:
			s.report(s.kind, m, ResultOK, nil)
		case ctx.Err() != nil:
			s.report(s.kind, m, ResultDropped, err)
		default:
			s.report(s.kind, m, ResultFailed, err)
		}
	}
}

// deliver tries m up to Tries times, waiting Backoff doubling between.
func (s *sender) deliver(ctx context.Context, m message) error {
	var err error
	wait := s.policy.Backoff
	for try := 1; ; try++ {
		tctx, cancel := context.WithTimeout(ctx, s.policy.Timeout)
		err = s.send(tctx, m)
		cancel()
		if err == nil || try >= s.policy.Tries {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait *= 2
	}
}

func (s *sender) send(ctx context.Context, m message) error {
	if m.argv != nil {
		return runCommand(ctx, m)
	}
	// Errors name the target as mask.URL shows it: net/http's quote the
	// whole URL, tokens and all.
	req, err := http.NewRequestWithContext(ctx, m.method, m.url, bytes.NewReader(m.body))
	if err != nil {
		return mask.Error(err, m.url)
	}
	for k, v := range m.header {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return mask.Error(err, m.url)
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s", m.method, mask.URL(m.url), resp.Status)
	}
	return nil
}

// runCommand runs a command target in its own process group, the payload
// in its environment and the output tail on stdin; the timeout ends the
// whole group.
func runCommand(ctx context.Context, m message) error {
	cmd := exec.CommandContext(ctx, m.argv[0], m.argv[1:]...)
	cmd.Env = append(os.Environ(), m.env...)
	cmd.Stdin = strings.NewReader(m.stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 200 {
			msg = msg[len(msg)-200:]
		}
		return fmt.Errorf("%s: %w: %s", m.argv[0], err, msg)
	}
	return nil
}
