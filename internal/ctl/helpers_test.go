package ctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/testlog"
)

// peerEnv makes the test binary a socket client instead of running tests:
// the other-uid test re-executes it as another user.
const peerEnv = "CTL_TEST_PEER_SOCKET"

// Exit codes of the peer helper.
const (
	peerOK      = 0
	peerRefused = 3
	peerNoDial  = 4
	peerMixed   = 5
)

// serveEnv makes the test binary a server on the socket at its value: the
// untrusted-server test runs it as another user.
const serveEnv = "CTL_TEST_SERVE_SOCKET"

// serveHelperLife bounds the server helper, should its test not kill it.
const serveHelperLife = 30 * time.Second

func TestMain(m *testing.M) {
	if path := os.Getenv(peerEnv); path != "" {
		os.Exit(peerHelper(path))
	}
	if path := os.Getenv(serveEnv); path != "" {
		os.Exit(serveHelper(path))
	}
	os.Exit(m.Run())
}

// peerHelper asks for the jobs and a run's log and tells by its exit
// code how it went: both answered, both refused, or (peerMixed) one each.
func peerHelper(path string) int {
	c, err := Dial(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return peerNoDial
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, errJobs := c.Jobs(ctx)
	_, errLog := c.Log(ctx, "sync", "r0")
	switch {
	case errJobs == nil && errLog == nil:
		return peerOK
	case errJobs != nil && errLog != nil:
		fmt.Fprintln(os.Stderr, errJobs)
		fmt.Fprintln(os.Stderr, errLog)
		return peerRefused
	}
	fmt.Fprintln(os.Stderr, "jobs:", errJobs, "log:", errLog)
	return peerMixed
}

// serveHelper answers with the fake backend, to any uid, until killed or
// serveHelperLife has passed.
func serveHelper(path string) int {
	ln, err := Listen(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), serveHelperLife)
	defer cancel()
	if err := serve(ctx, ln, newFakeBackend(), nil, func(uint32) bool { return true }); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// ref is the fixed reference time of the fixtures, in UTC so that it
// survives a JSON round trip unchanged.
func ref(offset time.Duration) time.Time {
	return time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC).Add(offset)
}

// fakeBackend knows the jobs "sync", "a.b", "." and "..", and records its
// calls.
type fakeBackend struct {
	jobs      []JobStatus
	locks     []LockStatus
	resources []ResourceStatus
	history   []run.Record
	failAll   error // when set, every request/response method returns it

	mu    sync.Mutex
	calls []string
	query HistoryQuery

	subscribed   chan chan WireEvent // each subscription's channel, for the test to feed
	unsubscribed chan struct{}       // one value per ended subscription
}

func newFakeBackend() *fakeBackend {
	return &fakeBackend{
		jobs: []JobStatus{
			{Name: "sync", Schedule: "*/5 * * * *", Timezone: "UTC", State: StateRunning, RunID: "r1", PID: 4242,
				StartedAt: ref(0), Deadline: ref(time.Minute), LastOutcome: "ok", LastStartedAt: ref(-time.Hour),
				LastEndedAt: ref(-time.Hour + time.Second), NextRun: ref(5 * time.Minute), Lock: "orders",
				Holder: &run.Holder{PID: 4242, Host: "h1", Job: "sync", RunID: "r1", Since: ref(0)}, Enabled: true,
				Counts: Counts{Since: ref(-24 * time.Hour), Runs: 10, Skips: 2, Failures: 1}},
			{Name: "a.b", Schedule: "@daily", Timezone: "Local", State: StateDisabled, Lock: "a.b"},
			// Valid job names that a URL path would lose.
			{Name: ".", Schedule: "@hourly", State: StatePaused, Paused: true, Lock: "."},
			{Name: "..", Schedule: "@every 1m", State: StateQueued, Lock: ".."},
			{Name: "held", Schedule: "@hourly", State: StateIdle, Lock: "held"},
		},
		locks: []LockStatus{
			{Lock: "orders", Held: true, PID: 4242, Host: "h1", Job: "sync", RunID: "r1", Slot: ref(0),
				Since: ref(0), SupervisorPID: 4000},
			{Lock: "x", Held: true, PID: 77, Since: ref(-time.Minute), Foreign: true, Cmdline: "flock -n x.lock sleep 9"},
		},
		history: []run.Record{
			{Job: "sync", RunID: "r0", Outcome: "ok", ScheduledAt: ref(-time.Hour), StartedAt: ref(-time.Hour),
				EndedAt: ref(-time.Hour + time.Second), ExitCode: &zero, LogPath: "/state/logs/sync/r0.log", Attempt: 2},
			{Job: "sync", RunID: "s1", Outcome: "skipped", ScheduledAt: ref(-time.Minute), Reason: "lock held", Attempt: 1,
				Holder: &run.Holder{PID: 1, Host: "h1", Job: "sync", RunID: "r1", Since: ref(-2 * time.Minute)}},
		},
		subscribed:   make(chan chan WireEvent, 4),
		unsubscribed: make(chan struct{}, 4),
	}
}

func (f *fakeBackend) record(call string) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
}

func (f *fakeBackend) lastCall() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return ""
	}
	return f.calls[len(f.calls)-1]
}

// known checks a job name the way the daemon would.
func (f *fakeBackend) known(verb, job string) error {
	if f.failAll != nil {
		return f.failAll
	}
	if !slices.ContainsFunc(f.jobs, func(j JobStatus) bool { return j.Name == job }) {
		return fmt.Errorf("%w %q", ErrUnknownJob, job)
	}
	f.record(verb + " " + job)
	return nil
}

func (f *fakeBackend) Jobs(context.Context) ([]JobStatus, error) { return f.jobs, f.failAll }
func (f *fakeBackend) JobsNamed(_ context.Context, names []string) ([]JobStatus, error) {
	var out []JobStatus
	for _, j := range f.jobs {
		if slices.Contains(names, j.Name) {
			out = append(out, j)
		}
	}
	return out, f.failAll
}
func (f *fakeBackend) Locks(context.Context) ([]LockStatus, error) { return f.locks, f.failAll }

func (f *fakeBackend) Resources(context.Context) ([]ResourceStatus, error) {
	return f.resources, f.failAll
}

// zero is an exit code of 0.
var zero = 0

// Log knows one run's log, sync's r0.
func (f *fakeBackend) Log(_ context.Context, job, runID string) (RunLog, error) {
	if f.failAll != nil {
		return RunLog{}, f.failAll
	}
	if job != "sync" || runID != "r0" {
		return RunLog{}, fmt.Errorf("%w for run %s of %s", ErrNoLog, runID, job)
	}
	return RunLog{Job: job, RunID: runID, Lines: []string{"stdout | one", "stderr | two"}, Omitted: 12}, nil
}

func (f *fakeBackend) History(_ context.Context, q HistoryQuery) ([]run.Record, error) {
	f.mu.Lock()
	f.query = q
	f.mu.Unlock()
	return f.history, f.failAll
}

func (f *fakeBackend) RunNow(_ context.Context, job string, o FireOptions) (RunResult, error) {
	if err := f.known(verbWith("run", o.Force, " --force"), job); err != nil {
		return RunResult{}, err
	}
	if job == "held" {
		return RunResult{RunID: "run-held", Outcome: "skipped", Reason: "lock held by pid 7@h"}, nil
	}
	return RunResult{RunID: "run-" + job, Started: true}, nil
}

func (f *fakeBackend) Trigger(_ context.Context, job string, o FireOptions) (RunResult, error) {
	if err := f.known(verbWith("trigger", o.Force, " --force"), job); err != nil {
		return RunResult{}, err
	}
	return RunResult{RunID: "trigger-" + job, Started: true}, nil
}

func (f *fakeBackend) Daemon(context.Context) (DaemonStatus, error) {
	return DaemonStatus{PID: 42, ShuttingDown: true, Finishing: 2, Refused: []string{"jobs.yaml:3:5: bad"}}, f.failAll
}

// fakeHosts is the fake's fleet: two hosts, one running a job.
var fakeHosts = Hosts{Shared: true, Self: "h1", Hosts: []HostStatus{
	{Host: "h1", State: "up", Version: "1.4.0", PID: 4000, StartedAt: ref(-time.Hour), LastBeat: ref(0), SilentMS: 400,
		ClockOffsetMS: -12, Running: []HostRun{{Job: "sync", RunID: "r1", StartedAt: ref(0)}}},
	{Host: "h2", State: "lost", Version: "1.3.9", PID: 5000, StartedAt: ref(-2 * time.Hour), LastBeat: ref(-time.Minute),
		SilentMS: 60000, ClockOffsetMS: 1500, Running: []HostRun{}},
}}

func (f *fakeBackend) Hosts(context.Context) (Hosts, error) { return fakeHosts, f.failAll }

func (f *fakeBackend) Pause(_ context.Context, job string) error  { return f.known("pause", job) }
func (f *fakeBackend) Resume(_ context.Context, job string) error { return f.known("resume", job) }

func (f *fakeBackend) Kill(_ context.Context, job string, o KillOptions) (KillResult, error) {
	if err := f.known(verbWith("kill", o.NoWait, " --no-wait"), job); err != nil {
		return KillResult{}, err
	}
	return fakeKill, nil
}

// fakeKill is the fake backend's answer to every kill.
var fakeKill = KillResult{Killed: 2, Now: time.Unix(100, 0).UTC(), Runs: []KilledRun{
	{RunID: "r1", Ended: true, Outcome: run.Interrupted, Reason: "killed by operator", SignalledAt: time.Unix(97, 0).UTC(), KillAt: time.Unix(107, 0).UTC()},
	{RunID: "r2", Adopted: true, Already: true, SignalledAt: time.Unix(90, 0).UTC(), KillAt: time.Unix(103, 0).UTC()},
}}

// verbWith is verb with suffix when on: the fake's record of an option.
func verbWith(verb string, on bool, suffix string) string {
	if on {
		return verb + suffix
	}
	return verb
}

func (f *fakeBackend) Reload(context.Context) error {
	if f.failAll != nil {
		return f.failAll
	}
	f.record("reload")
	return nil
}

func (f *fakeBackend) Subscribe(context.Context) (<-chan WireEvent, func()) {
	ch := make(chan WireEvent, 16)
	f.subscribed <- ch
	var once sync.Once
	return ch, func() { once.Do(func() { f.unsubscribed <- struct{}{} }) }
}

// sockDir is a directory for a socket. t.TempDir can exceed the 107 bytes
// a socket path may have (a long TMPDIR, a long test name); /tmp cannot.
func sockDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if len(dir)+len("/cronvisor.sock.lock") <= maxSockPath {
		return dir
	}
	dir, err := os.MkdirTemp("/tmp", "ctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// testServer is a running Serve on a real socket.
type testServer struct {
	path   string
	client *Client
	log    *testlog.Buffer // the server's goroutines write it while the test reads
	stop   context.CancelFunc
	done   chan error
}

// startServer serves b on a fresh socket with allow as the uid check
// (nil: Serve's own) and stops it when the test ends.
func startServer(t *testing.T, b Backend, allow func(uint32) bool) *testServer {
	t.Helper()
	return startServerAt(t, sockDir(t)+"/cronvisor.sock", b, allow)
}

// startServerAt is startServer on a given socket path.
func startServerAt(t *testing.T, path string, b Backend, allow func(uint32) bool) *testServer {
	t.Helper()
	if allow == nil {
		allow = allowUser(os.Geteuid())
	}
	s := &testServer{path: path, log: &testlog.Buffer{}, done: make(chan error, 1)}
	ln, err := Listen(s.path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	go func() { s.done <- serve(ctx, ln, b, slog.New(slog.NewTextHandler(s.log, nil)), allow) }()
	t.Cleanup(func() {
		if err := s.shutdown(); err != nil {
			t.Error(err)
		}
	})
	if s.client, err = Dial(s.path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.client.Close() })
	return s
}

// shutdown stops the server and returns Serve's error; calling it again
// returns nil.
func (s *testServer) shutdown() error {
	s.stop()
	select {
	case err, ok := <-s.done:
		if ok {
			close(s.done)
		}
		return err
	case <-time.After(5 * time.Second):
		return errors.New("Serve did not return within 5s of its context's end")
	}
}

// within bounds a test's calls.
func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
