package daemon

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/config"
	"cronvisor/internal/lock"
)

// trace records, in order, the parts a daemon starts and stops (from its
// debug records) and the Close calls the fakes see.
type trace struct {
	mu    sync.Mutex
	steps []string
	recs  []slog.Record
}

func (tr *trace) add(step string) {
	tr.mu.Lock()
	tr.steps = append(tr.steps, step)
	tr.mu.Unlock()
}

// prefixed returns the steps that start with prefix ("started ", "stopped "
// or "closed "), in order.
func (tr *trace) prefixed(prefixes ...string) []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []string
	for _, s := range tr.steps {
		for _, p := range prefixes {
			if len(s) > len(p) && s[:len(p)] == p {
				out = append(out, s)
			}
		}
	}
	return out
}

// logged returns the attributes of the records with message msg.
func (tr *trace) logged(msg string) []map[string]string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []map[string]string
	for _, r := range tr.recs {
		if r.Message != msg {
			continue
		}
		m := map[string]string{"level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
		out = append(out, m)
	}
	return out
}

// traceHandler is the daemon's one logger in tests: every record is kept,
// and "started"/"stopped" records become steps of the trace.
type traceHandler struct{ tr *trace }

func (traceHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h traceHandler) WithAttrs([]slog.Attr) slog.Handler     { return h }
func (h traceHandler) WithGroup(string) slog.Handler          { return h }

func (h traceHandler) Handle(_ context.Context, r slog.Record) error {
	h.tr.mu.Lock()
	h.tr.recs = append(h.tr.recs, r.Clone())
	h.tr.mu.Unlock()
	if r.Message == "started" || r.Message == "stopped" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "part" {
				h.tr.add(r.Message + " " + a.Value.String())
			}
			return true
		})
	}
	return nil
}

// fakeLocker is the real file backend whose Close the trace sees.
type fakeLocker struct {
	lock.Locker
	tr *trace
}

func (l fakeLocker) Close() error {
	l.tr.add("closed locker")
	if c, ok := l.Locker.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Replay is the real backend's, which the embedded interface hides.
func (l fakeLocker) Replay() (int, error) {
	if r, ok := l.Locker.(lock.Replayer); ok {
		return r.Replay()
	}
	return 0, nil
}

// fakeListener is a real control socket whose Close the trace sees.
type fakeListener struct {
	net.Listener
	tr *trace
}

func (l fakeListener) Close() error { l.tr.add("closed listener"); return l.Listener.Close() }

// spyClock is a fake clock that reports each timer made, by duration.
type spyClock struct {
	*clock.Fake
	made chan time.Duration
}

func (c spyClock) NewTimer(d time.Duration) clock.Timer {
	t := c.Fake.NewTimer(d)
	select {
	case c.made <- d:
	default:
	}
	return t
}

// harness is a daemon's surroundings in a temp dir: jobs.yaml, its state
// dir, and fakes for the lock backend, the socket and the clock.
type harness struct {
	t     *testing.T
	dir   string
	path  string // jobs.yaml
	tr    *trace
	clock spyClock
	opts  Options
}

func newHarness(t *testing.T, jobsYAML string) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, dir: dir, path: filepath.Join(dir, "jobs.yaml"), tr: &trace{},
		clock: spyClock{clock.NewFake(time.Now().Truncate(time.Second)), make(chan time.Duration, 16)}}
	h.write(jobsYAML)
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	h.opts = Options{
		ConfigPath: h.path,
		Log:        slog.New(traceHandler{h.tr}),
		Clock:      h.clock,
		Locker: func(cfg *config.Config) (lock.Locker, error) {
			fl, err := NewLocker(cfg)
			return fakeLocker{fl, h.tr}, err
		},
		Listen: func(path string) (net.Listener, error) {
			ln, err := net.Listen("unix", path)
			if err != nil {
				return nil, err
			}
			return fakeListener{ln, h.tr}, nil
		},
	}
	return h
}

// write replaces jobs.yaml; body is its jobs: section and anything after.
func (h *harness) write(body string) {
	h.t.Helper()
	text := "state_dir: " + filepath.Join(h.dir, "state") + "\n" + body
	if err := os.WriteFile(h.path, []byte(text), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) load() *config.Config {
	h.t.Helper()
	cfg, problems := config.Load(h.path)
	if cfg == nil {
		h.t.Fatalf("config: %v", problems)
	}
	return cfg
}

// start starts a daemon over jobs.yaml and shuts it down at the test's end
// if the test did not.
func (h *harness) start() *Daemon {
	h.t.Helper()
	d, err := New(h.load(), h.opts)
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	h.t.Cleanup(func() { d.Shutdown(context.Canceled) })
	return d
}

// run runs d's loop until the test ends; the returned channel gets the
// signal that ended it.
func (h *harness) run(d *Daemon, sigs <-chan os.Signal) <-chan os.Signal {
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan os.Signal, 1)
	returned := make(chan struct{})
	go func() { defer close(returned); ended <- d.Run(ctx, sigs) }()
	h.t.Cleanup(func() { cancel(); <-returned })
	return ended
}

func equalSteps(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

const oneJob = `jobs:
  - name: nap
    schedule: "@every 1h"
    command: ["sleep", "0.2"]
    timeout: 1m
`
