package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

func TestRoutesRoundTrip(t *testing.T) {
	f := newFakeBackend()
	s := startServer(t, f, nil)
	c := s.client
	tests := []struct {
		name     string
		call     func(ctx context.Context) (any, error)
		want     any
		wantCall string // the backend's last call afterwards, "" for reads
	}{
		{"jobs", func(ctx context.Context) (any, error) { return c.Jobs(ctx) }, f.jobs, ""},
		{"jobs named", func(ctx context.Context) (any, error) { return c.JobsNamed(ctx, []string{"..", "sync", "gone"}) },
			[]JobStatus{f.jobs[0], f.jobs[3]}, ""},
		{"locks", func(ctx context.Context) (any, error) { return c.Locks(ctx) }, f.locks, ""},
		{"history", func(ctx context.Context) (any, error) { return c.History(ctx, HistoryQuery{Job: "sync"}) }, f.history, ""},
		{"log", func(ctx context.Context) (any, error) { return c.Log(ctx, "sync", "r0") },
			RunLog{Job: "sync", RunID: "r0", Lines: []string{"stdout | one", "stderr | two"}, Omitted: 12}, ""},
		{"run", func(ctx context.Context) (any, error) { return c.RunNow(ctx, "sync", FireOptions{}) }, RunResult{RunID: "run-sync", Started: true}, "run sync"},
		{"run skipped", func(ctx context.Context) (any, error) { return c.RunNow(ctx, "held", FireOptions{}) },
			RunResult{RunID: "run-held", Outcome: "skipped", Reason: "lock held by pid 7@h"}, "run held"},
		{"run a dotted name", func(ctx context.Context) (any, error) { return c.RunNow(ctx, "a.b", FireOptions{}) }, RunResult{RunID: "run-a.b", Started: true}, "run a.b"},
		{"run a job named ..", func(ctx context.Context) (any, error) { return c.RunNow(ctx, "..", FireOptions{}) }, RunResult{RunID: "run-..", Started: true}, "run .."},
		{"trigger", func(ctx context.Context) (any, error) { return c.Trigger(ctx, "sync", FireOptions{}) }, RunResult{RunID: "trigger-sync", Started: true}, "trigger sync"},
		{"trigger forced", func(ctx context.Context) (any, error) { return c.Trigger(ctx, "sync", FireOptions{Force: true}) },
			RunResult{RunID: "trigger-sync", Started: true}, "trigger --force sync"},
		{"run forced", func(ctx context.Context) (any, error) { return c.RunNow(ctx, "sync", FireOptions{Force: true}) },
			RunResult{RunID: "run-sync", Started: true}, "run --force sync"},
		{"hosts", func(ctx context.Context) (any, error) { return c.Hosts(ctx) }, fakeHosts, ""},
		{"daemon", func(ctx context.Context) (any, error) { return c.Daemon(ctx) },
			DaemonStatus{PID: 42, ShuttingDown: true, Finishing: 2, Refused: []string{"jobs.yaml:3:5: bad"}}, ""},
		{"kill a job named .", func(ctx context.Context) (any, error) { return c.Kill(ctx, ".", KillOptions{}) }, fakeKill, "kill ."},
		{"pause", func(ctx context.Context) (any, error) { return nil, c.Pause(ctx, "sync") }, nil, "pause sync"},
		{"resume", func(ctx context.Context) (any, error) { return nil, c.Resume(ctx, "a.b") }, nil, "resume a.b"},
		{"kill", func(ctx context.Context) (any, error) { return c.Kill(ctx, "sync", KillOptions{}) }, fakeKill, "kill sync"},
		{"kill without waiting", func(ctx context.Context) (any, error) { return c.Kill(ctx, "sync", KillOptions{NoWait: true}) }, fakeKill, "kill --no-wait sync"},
		{"reload", func(ctx context.Context) (any, error) { return nil, c.Reload(ctx) }, nil, "reload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call(within(t, 5*time.Second))
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
			if tt.wantCall != "" && f.lastCall() != tt.wantCall {
				t.Errorf("backend's last call %q, want %q", f.lastCall(), tt.wantCall)
			}
		})
	}
}

func TestEmptyListsAreArrays(t *testing.T) {
	f := newFakeBackend()
	f.jobs, f.locks, f.history = nil, nil, nil
	s := startServer(t, f, nil)
	for _, path := range []string{"/v1/jobs", "/v1/locks", "/v1/history"} {
		t.Run(path, func(t *testing.T) {
			var raw json.RawMessage
			if err := s.client.call(within(t, 5*time.Second), http.MethodGet, path, nil, &raw); err != nil {
				t.Fatal(err)
			}
			if string(raw) != "[]" {
				t.Errorf("body %s, want []", raw)
			}
		})
	}
}

func TestHistoryQueryRoundTrip(t *testing.T) {
	f := newFakeBackend()
	s := startServer(t, f, nil)
	tests := []struct {
		name string
		q    HistoryQuery
	}{
		{"empty", HistoryQuery{}},
		{"job only", HistoryQuery{Job: "sync"}},
		{"everything", HistoryQuery{Job: "a.b", Outcomes: []run.Outcome{"failed", "timeout"}, Since: ref(-90 * time.Minute), Limit: 7}},
		{"sub-second since", HistoryQuery{Since: ref(123456789 * time.Nanosecond)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.client.History(within(t, 5*time.Second), tt.q); err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			got := f.query
			f.mu.Unlock()
			if got.Job != tt.q.Job || !slices.Equal(got.Outcomes, tt.q.Outcomes) || !got.Since.Equal(tt.q.Since) || got.Limit != tt.q.Limit {
				t.Errorf("backend got %+v, want %+v", got, tt.q)
			}
		})
	}
}

// sameStrings treats nil and empty alike, as a query string does.

func TestErrors(t *testing.T) {
	f := newFakeBackend()
	s := startServer(t, f, nil)
	c := s.client
	tests := []struct {
		name       string
		call       func(ctx context.Context) error
		wantIs     error // nil: must match neither sentinel
		wantStatus int
		wantMsg    string
	}{
		{"run unknown", func(ctx context.Context) error { _, err := c.RunNow(ctx, "nope", FireOptions{}); return err }, ErrUnknownJob, 404, `"nope"`},
		{"trigger unknown", func(ctx context.Context) error { _, err := c.Trigger(ctx, "nope", FireOptions{}); return err }, ErrUnknownJob, 404, `"nope"`},
		{"pause unknown", func(ctx context.Context) error { return c.Pause(ctx, "nope") }, ErrUnknownJob, 404, `"nope"`},
		{"resume unknown", func(ctx context.Context) error { return c.Resume(ctx, "nope") }, ErrUnknownJob, 404, `"nope"`},
		{"kill unknown", func(ctx context.Context) error { _, err := c.Kill(ctx, "nope", KillOptions{}); return err }, ErrUnknownJob, 404, `"nope"`},
		{"a slash in a name stays in the name", func(ctx context.Context) error { return c.Pause(ctx, "x/y") }, ErrUnknownJob, 404, `"x/y"`},
		{"bad outcome", func(ctx context.Context) error {
			_, err := c.History(ctx, HistoryQuery{Outcomes: []run.Outcome{"fine"}})
			return err
		}, ErrBadRequest, 400, `outcome "fine"`},
		{"bad since", func(ctx context.Context) error {
			return c.call(ctx, http.MethodGet, "/v1/history", map[string][]string{"since": {"yesterday"}}, nil)
		}, ErrBadRequest, 400, `since "yesterday"`},
		{"a run without a log", func(ctx context.Context) error { _, err := c.Log(ctx, "sync", "s1"); return err },
			ErrNoLog, 404, "no saved log for run s1 of sync"},
		{"a log without its run", func(ctx context.Context) error {
			return c.call(ctx, http.MethodGet, "/v1/logs", map[string][]string{"job": {"sync"}}, nil)
		}, ErrBadRequest, 400, "want both job and run"},
		{"a log query with more", func(ctx context.Context) error {
			return c.call(ctx, http.MethodGet, "/v1/logs", map[string][]string{"job": {"sync"}, "run": {"r0"}, "path": {"/etc/passwd"}}, nil)
		}, ErrBadRequest, 400, `unknown parameter "path"`},
		{"a jobs query with more", func(ctx context.Context) error {
			return c.call(ctx, http.MethodGet, "/v1/jobs", map[string][]string{"name": {"sync"}, "range": {"0-40"}}, nil)
		}, ErrBadRequest, 400, `unknown parameter "range"`},
		{"unknown route is not an unknown job", func(ctx context.Context) error {
			return c.call(ctx, http.MethodGet, "/v1/nope", nil, nil)
		}, nil, 404, "no route GET /v1/nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(within(t, 5*time.Second))
			checkRemote(t, err, tt.wantIs, tt.wantStatus, tt.wantMsg)
		})
	}
}

func TestBackendFailureIs500(t *testing.T) {
	f := newFakeBackend()
	f.failAll = errors.New("jobs.yaml:3:7: unknown key \"shedule\"")
	s := startServer(t, f, nil)
	c := s.client
	tests := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"jobs", func(ctx context.Context) error { _, err := c.Jobs(ctx); return err }},
		{"reload", func(ctx context.Context) error { return c.Reload(ctx) }},
		{"run", func(ctx context.Context) error { _, err := c.RunNow(ctx, "sync", FireOptions{}); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRemote(t, tt.call(within(t, 5*time.Second)), nil, 500, f.failAll.Error())
		})
	}
	if !strings.Contains(s.log.String(), "shedule") {
		t.Errorf("server errors not logged; log:\n%s", s.log)
	}
}

// checkRemote asserts an error the daemon answered with.
func checkRemote(t *testing.T, err error, wantIs error, wantStatus int, wantMsg string) {
	t.Helper()
	var re *RemoteError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T), want a *RemoteError", err, err)
	}
	if re.Status != wantStatus {
		t.Errorf("status %d, want %d", re.Status, wantStatus)
	}
	for _, s := range []error{ErrUnknownJob, ErrBadRequest, ErrNoLog} {
		if errors.Is(err, s) != (s == wantIs) {
			t.Errorf("errors.Is(%v, %v) = %v", err, s, !(s == wantIs))
		}
	}
	if !strings.Contains(err.Error(), wantMsg) {
		t.Errorf("message %q does not contain %q", err, wantMsg)
	}
}

// oldDaemon answers every jobs query with every job, as a daemon that
// predates GET /v1/jobs?name= does.
type oldDaemon struct{ *fakeBackend }

func (o oldDaemon) JobsNamed(ctx context.Context, _ []string) ([]JobStatus, error) {
	return o.Jobs(ctx)
}

func TestJobsNamedOfAnOldDaemonIsUnsupported(t *testing.T) {
	s := startServer(t, oldDaemon{newFakeBackend()}, nil)
	jobs, err := s.client.JobsNamed(within(t, 5*time.Second), []string{"sync"})
	if !errors.Is(err, ErrUnsupported) || jobs != nil {
		t.Fatalf("JobsNamed = %v, %v; want ErrUnsupported and no jobs", jobs, err)
	}
}

// GET /v1/hosts is behind the uid check like every route; an older
// daemon's "no route" answer reads as ErrUnsupported, not as an empty
// fleet, and an unknown job's 404 is not mistaken for it.
func TestHostsRoute(t *testing.T) {
	refused := startServer(t, newFakeBackend(), func(uint32) bool { return false })
	h, err := refused.client.Hosts(within(t, 5*time.Second))
	var re *RemoteError
	if !errors.As(err, &re) || re.Status != http.StatusForbidden || h.Shared {
		t.Errorf("another uid's Hosts = %+v, %v; want a 403 refusal", h, err)
	}

	s := startServer(t, newFakeBackend(), nil)
	err = s.client.call(within(t, 5*time.Second), http.MethodGet, "/v1/nothing", nil, &h)
	if !isNoRoute(err) {
		t.Errorf("a route the daemon lacks answered %v; isNoRoute false", err)
	}
	_, err = s.client.RunNow(within(t, 5*time.Second), "nope", FireOptions{})
	if isNoRoute(err) {
		t.Errorf("an unknown job's 404 (%v) reads as a missing route", err)
	}
}
