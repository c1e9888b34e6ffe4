package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

const (
	// shutdownTimeout bounds the graceful part of Serve's shutdown; then
	// the remaining connections are closed.
	shutdownTimeout = 2 * time.Second
	// streamWriteTimeout drops an events client that stopped reading, so
	// that its subscription does not linger.
	streamWriteTimeout = 10 * time.Second
	// eventBatchWindow is how long the first event of a burst waits for
	// the rest: short for a human, longer than a burst of job starts.
	eventBatchWindow = 100 * time.Millisecond
	// maxEventBatch bounds a batch, so a flood still streams steadily.
	maxEventBatch = 512
)

// Serve answers the control API on ln until ctx is done, then shuts down:
// event streams end at once, other requests get shutdownTimeout to finish.
// Requests from a uid other than the daemon's own or root are answered
// 403, saying that a daemon runs and refused them (see guard). Serve closes ln (for a Listen listener, that
// removes the socket file and releases its flock) and returns nil after a
// shutdown, or the error that stopped it serving.
func Serve(ctx context.Context, ln net.Listener, b Backend, log *slog.Logger) error {
	return serve(ctx, ln, b, log, allowUser(os.Geteuid()))
}

// serve is Serve with the uid check as a parameter, so tests can serve
// another user.
func serve(ctx context.Context, ln net.Listener, b Backend, log *slog.Logger, allow func(uint32) bool) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	stop := make(chan struct{})
	s := &server{b: b, log: log, stop: stop}
	hs := &http.Server{
		Handler:           guard(allow, log, s.routes()),
		ConnContext:       connPeer,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("control socket: %w", err)
	case <-ctx.Done():
	}
	// Event streams never go idle by themselves; Shutdown waits for them.
	close(stop)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("control socket: requests still running at shutdown; closing them", "err", err)
		hs.Close()
	}
	<-served // http.ErrServerClosed
	return nil
}

// server holds what the handlers share.
type server struct {
	b    Backend
	log  *slog.Logger
	stop <-chan struct{} // closed when shutdown begins
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/jobs", s.jobs)
	mux.HandleFunc("GET /v1/locks", s.locks)
	mux.HandleFunc("GET /v1/resources", s.resources)
	mux.HandleFunc("GET /v1/history", s.history)
	mux.HandleFunc("GET /v1/logs", s.runLog)
	mux.HandleFunc("GET /v1/daemon", s.daemon)
	mux.HandleFunc("GET /v1/hosts", s.hosts)
	mux.HandleFunc("POST /v1/jobs/{name}/run", s.run)
	mux.HandleFunc("POST /v1/jobs/{name}/trigger", s.trigger)
	mux.HandleFunc("POST /v1/jobs/{name}/pause", s.pause)
	mux.HandleFunc("POST /v1/jobs/{name}/resume", s.resume)
	mux.HandleFunc("POST /v1/jobs/{name}/kill", s.kill)
	mux.HandleFunc("POST /v1/reload", s.reload)
	mux.HandleFunc("GET /v1/events", s.events)
	// JSON rather than the mux's text answer, without a code: a client of
	// another version must not read it as an unknown job.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, errorBody{Error: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)})
	})
	return mux
}

// jobs answers GET /v1/jobs, all of them or, with name parameters, only
// those; any other parameter is refused, so that a query a later client
// adds is not answered as if it were absent.
func (s *server) jobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		if k != "name" {
			s.fail(w, r, fmt.Errorf("%w: unknown parameter %q (want name)", ErrBadRequest, k))
			return
		}
	}
	var jobs []JobStatus
	var err error
	names, named := q["name"]
	js, streams := s.b.(JobStreamer)
	switch {
	case named:
		jobs, err = s.b.JobsNamed(r.Context(), names)
	case streams:
		s.streamJobs(w, r, js)
		return
	default:
		jobs, err = s.b.Jobs(r.Context())
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(jobs))
}

func (s *server) locks(w http.ResponseWriter, r *http.Request) {
	locks, err := s.b.Locks(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(locks))
}

func (s *server) history(w http.ResponseWriter, r *http.Request) {
	q, err := decodeQuery(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	recs, err := s.b.History(r.Context(), q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(recs))
}

// runLog answers GET /v1/logs?job=J&run=R with the end of that run's
// saved log. The log is read by the daemon, so a console that cannot read
// the state dir (another host's mount, root's 0700 dir) still shows it; the
// uid check in guard applies to this route as to every other.
func (s *server) runLog(w http.ResponseWriter, r *http.Request) {
	job, run, err := decodeLogQuery(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	l, err := s.b.Log(r.Context(), job, run)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	l.Lines = nonNil(l.Lines)
	writeJSON(w, http.StatusOK, l)
}

func (s *server) run(w http.ResponseWriter, r *http.Request) {
	s.fired(w, r, s.b.RunNow)
}

func (s *server) trigger(w http.ResponseWriter, r *http.Request) {
	s.fired(w, r, s.b.Trigger)
}

// fired answers a fire: 202 when its run started, else 200 with why not.
func (s *server) fired(w http.ResponseWriter, r *http.Request, fire func(context.Context, string, FireOptions) (RunResult, error)) {
	force, err := flag(r, "force")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := fire(r.Context(), r.PathValue("name"), FireOptions{Force: force})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if res.Started {
		status = http.StatusAccepted
	}
	writeJSON(w, status, res)
}

func (s *server) daemon(w http.ResponseWriter, r *http.Request) {
	st, err := s.b.Daemon(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *server) hosts(w http.ResponseWriter, r *http.Request) {
	h, err := s.b.Hosts(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h.Hosts = nonNil(h.Hosts)
	for i := range h.Hosts {
		h.Hosts[i].Running = nonNil(h.Hosts[i].Running)
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *server) pause(w http.ResponseWriter, r *http.Request) {
	s.noContent(w, r, s.b.Pause(r.Context(), r.PathValue("name")))
}

func (s *server) resume(w http.ResponseWriter, r *http.Request) {
	s.noContent(w, r, s.b.Resume(r.Context(), r.PathValue("name")))
}

func (s *server) reload(w http.ResponseWriter, r *http.Request) {
	s.noContent(w, r, s.b.Reload(r.Context()))
}

func (s *server) kill(w http.ResponseWriter, r *http.Request) {
	wait := true
	if r.URL.Query().Has("wait") {
		var err error
		if wait, err = flag(r, "wait"); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	res, err := s.b.Kill(r.Context(), r.PathValue("name"), KillOptions{NoWait: !wait})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// flag is the boolean query parameter name: absent is false.
func flag(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%w: %s=%q is not a boolean", ErrBadRequest, name, v)
	}
	return b, nil
}

// noContent answers a command without a result.
func (s *server) noContent(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// fail answers err with the status its sentinel calls for. Only server
// errors are logged: the others are the client's to report.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	body := errorBody{Error: err.Error()}
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrUnknownJob):
		status, body.Code = http.StatusNotFound, codeUnknownJob
	case errors.Is(err, ErrNoLog):
		status, body.Code = http.StatusNotFound, codeNoLog
	case errors.Is(err, ErrBadRequest):
		status, body.Code = http.StatusBadRequest, codeBadRequest
	default:
		s.log.Error("control socket: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // an error means the client went away
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
