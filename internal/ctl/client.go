package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
)

// DefaultTimeout bounds each request/response call of a Client, and the
// wait for an event stream to start.
const DefaultTimeout = 5 * time.Second

// Client talks to a daemon's control socket. Its methods mirror Backend
// and are safe for concurrent use. Errors the daemon answered with keep
// its message; a 404 for a job matches ErrUnknownJob, one for a run's log
// ErrNoLog, a 400 ErrBadRequest and a 403 ErrRefused.
type Client struct {
	path string
	hc   *http.Client
	// Timeout bounds each call but Events, whose stream lives as long as
	// its context. Dial sets it to DefaultTimeout; 0 means that too.
	Timeout time.Duration
}

func (c *Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// Dial checks that a daemon listens on the socket at path and that it runs
// as this user or root, and returns a client for it. Nothing there (no
// file, or a stale one) is ErrNoDaemon, wrapped with the path; a server of
// another user is an *UntrustedError (ErrUntrusted), for this and every
// later connection; other failures, such as EACCES on another user's
// socket, are returned wrapped with the path.
func Dial(path string) (*Client, error) {
	conn, err := net.DialTimeout("unix", path, probeTimeout)
	if err != nil {
		return nil, dialError(path, err)
	}
	err = checkServer(conn, path)
	conn.Close()
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		// Each connection is checked: the socket may be replaced between
		// two calls.
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "unix", path)
			if err != nil {
				return nil, err
			}
			if err := checkServer(c, path); err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		},
		MaxIdleConns:       4,
		IdleConnTimeout:    30 * time.Second,
		DisableCompression: true,
	}
	return &Client{path: path, hc: &http.Client{Transport: tr}, Timeout: DefaultTimeout}, nil
}

// dialError tells "no daemon" apart from a socket we may not use.
func dialError(path string, err error) error {
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%w on %s", ErrNoDaemon, path)
	}
	if errors.Is(err, syscall.EACCES) {
		return deniedError(path, err)
	}
	return fmt.Errorf("control socket %s: %w", path, err)
}

// deniedError explains an EACCES on connect: the socket (or its dir) is
// another user's. When the kernel lists the path as listening, a daemon
// runs there and this is its refusal (ErrRefused).
func deniedError(path string, err error) error {
	who := "its directory is closed to you"
	if fi, serr := os.Lstat(path); serr == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			who = fmt.Sprintf("socket owner %s, mode %s", statedir.UserName(st.Uid), fi.Mode())
		}
	}
	self := statedir.UserName(uint32(os.Geteuid()))
	if procfs.Listening(path) {
		return &refusedError{fmt.Sprintf("a cronvisor daemon serves %s but refused you (%s): permission denied (%s); it serves only its own user and root",
			path, self, who)}
	}
	return fmt.Errorf("control socket %s: %w for you (%s; %s): a daemon of another user may serve it", path, err, self, who)
}

// Close drops the client's idle connections.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// Jobs lists the daemon's jobs. Timeout bounds the wait for the answer
// and each stall in it, not the whole read (see callFlowing).
func (c *Client) Jobs(ctx context.Context) ([]JobStatus, error) {
	var jobs []JobStatus
	return jobs, c.callFlowing(ctx, http.MethodGet, "/v1/jobs", &jobs)
}

// JobsNamed returns the named jobs' status; a job the daemon does not
// know is left out. A daemon that predates the query answers with every
// job: that is ErrUnsupported, not an answer.
func (c *Client) JobsNamed(ctx context.Context, names []string) ([]JobStatus, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var jobs []JobStatus
	if err := c.call(ctx, http.MethodGet, "/v1/jobs", url.Values{"name": names}, &jobs); err != nil {
		return nil, err
	}
	asked := make(map[string]bool, len(names))
	for _, n := range names {
		asked[n] = true
	}
	for _, j := range jobs {
		if !asked[j.Name] {
			return nil, fmt.Errorf("cronvisor daemon at %s: GET /v1/jobs?name= answered with job %q, not asked for: %w", c.path, j.Name, ErrUnsupported)
		}
	}
	return jobs, nil
}

// Locks lists the locks the daemon knows.
func (c *Client) Locks(ctx context.Context) ([]LockStatus, error) {
	var locks []LockStatus
	return locks, c.call(ctx, http.MethodGet, "/v1/locks", nil, &locks)
}

// Resources lists the declared resources, their slots' holders and the
// daemon's waiters.
func (c *Client) Resources(ctx context.Context) ([]ResourceStatus, error) {
	var res []ResourceStatus
	return res, c.call(ctx, http.MethodGet, "/v1/resources", nil, &res)
}

// History returns the history records that match q, newest first.
func (c *Client) History(ctx context.Context, q HistoryQuery) ([]run.Record, error) {
	var recs []run.Record
	return recs, c.call(ctx, http.MethodGet, "/v1/history", encodeQuery(q), &recs)
}

// Log returns the end of a run's saved log; ErrNoLog when it has none.
func (c *Client) Log(ctx context.Context, job, runID string) (RunLog, error) {
	var l RunLog
	return l, c.call(ctx, http.MethodGet, "/v1/logs", url.Values{"job": {job}, "run": {runID}}, &l)
}

// RunNow asks the daemon to fire job now and returns what the fire did.
func (c *Client) RunNow(ctx context.Context, job string, o FireOptions) (RunResult, error) {
	var a RunResult
	return a, c.call(ctx, http.MethodPost, jobPath(job, "run"), o.query(), &a)
}

// Trigger asks the daemon to fire job now under its overlap policy and
// returns what the fire did.
func (c *Client) Trigger(ctx context.Context, job string, o FireOptions) (RunResult, error) {
	var a RunResult
	return a, c.call(ctx, http.MethodPost, jobPath(job, "trigger"), o.query(), &a)
}

// query is o as the fire's query parameters.
func (o FireOptions) query() url.Values {
	if !o.Force {
		return nil
	}
	return url.Values{"force": {"true"}}
}

// Daemon describes the daemon itself.
func (c *Client) Daemon(ctx context.Context) (DaemonStatus, error) {
	var d DaemonStatus
	return d, c.call(ctx, http.MethodGet, "/v1/daemon", nil, &d)
}

// Hosts is the fleet's hosts when the daemon's history is shared. A
// daemon that predates the route answers ErrUnsupported.
func (c *Client) Hosts(ctx context.Context) (Hosts, error) {
	var h Hosts
	err := c.call(ctx, http.MethodGet, "/v1/hosts", nil, &h)
	if isNoRoute(err) {
		return Hosts{}, fmt.Errorf("cronvisor daemon at %s: GET /v1/hosts: %w", c.path, ErrUnsupported)
	}
	return h, err
}

// Pause stops job's scheduled fires until Resume.
func (c *Client) Pause(ctx context.Context, job string) error {
	return c.call(ctx, http.MethodPost, jobPath(job, "pause"), nil, nil)
}

// Resume undoes Pause.
func (c *Client) Resume(ctx context.Context, job string) error {
	return c.call(ctx, http.MethodPost, jobPath(job, "resume"), nil, nil)
}

// Kill ends job's runs and says where each stands. Unless o.NoWait the
// daemon waits for their end, up to KillWaitMax, which the call's bound
// allows for.
func (c *Client) Kill(ctx context.Context, job string, o KillOptions) (KillResult, error) {
	var a KillResult
	q, bound := url.Values(nil), c.timeout()
	if o.NoWait {
		q = url.Values{"wait": {"false"}}
	} else {
		bound += KillWaitMax
	}
	return a, c.callWithin(ctx, bound, http.MethodPost, jobPath(job, "kill"), q, &a)
}

// Reload makes the daemon reread jobs.yaml.
func (c *Client) Reload(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, "/v1/reload", nil, nil)
}

// Events subscribes to the daemon's live events. The channel is closed
// when the stream ends: ctx done, the daemon shutting down or gone, or a
// line that does not decode. Only the wait for the stream to start is
// bounded by Timeout.
func (c *Client) Events(ctx context.Context) (<-chan WireEvent, error) {
	ctx, cancel := context.WithCancel(ctx)
	started := time.AfterFunc(c.timeout(), cancel)
	resp, err := c.send(ctx, http.MethodGet, "/v1/events", nil)
	if !started.Stop() { // fired: ctx is cancelled, the stream is unusable
		if err == nil {
			resp.Body.Close()
		}
		err = fmt.Errorf("cronvisor daemon at %s: event stream did not start within %s: %w", c.path, c.timeout(), context.DeadlineExceeded)
	}
	if err == nil && resp.StatusCode != http.StatusOK {
		err = answerError(resp)
		resp.Body.Close()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	ch := make(chan WireEvent, 64)
	go func() {
		defer cancel()
		defer close(ch)
		defer resp.Body.Close()
		// A json.Decoder rather than a line scanner: a run's output line
		// has no length limit.
		dec := json.NewDecoder(resp.Body)
		for {
			var ev WireEvent
			if dec.Decode(&ev) != nil {
				return
			}
			select {
			case ch <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

// call does one request/response exchange bounded by c.Timeout and decodes
// a successful answer into out, unless out is nil.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, out any) error {
	return c.callWithin(ctx, c.timeout(), method, path, q, out)
}

// callWithin is call bounded by d rather than c.Timeout.
func (c *Client) callWithin(ctx context.Context, d time.Duration, method, path string, q url.Values, out any) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	resp, err := c.send(ctx, method, path, q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= http.StatusMultipleChoices {
		return answerError(resp)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("cronvisor daemon at %s: %s %s: bad answer: %w", c.path, method, path, err)
	}
	return nil
}

func (c *Client) send(ctx context.Context, method, path string, q url.Values) (*http.Response, error) {
	u := "http://cronvisor" + path // path is escaped already
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, fmt.Errorf("cronvisor daemon at %s: %w", c.path, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var untrusted *UntrustedError
		if errors.As(err, &untrusted) {
			return nil, untrusted
		}
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w on %s (it went away)", ErrNoDaemon, c.path)
		}
		return nil, fmt.Errorf("cronvisor daemon at %s: %s %s: %w", c.path, method, path, err)
	}
	return resp, nil
}

// jobPath is POST /v1/jobs/{name}/{verb}, name escaped. Dots are escaped
// too: job names "." and ".." are valid, and a path would be cleaned of
// them before routing.
func jobPath(job, verb string) string {
	return "/v1/jobs/" + strings.ReplaceAll(url.PathEscape(job), ".", "%2E") + "/" + verb
}

// RemoteError is an error the daemon answered with.
type RemoteError struct {
	Status  int    // the HTTP status
	Message string // the daemon's words
	code    string
}

// Error is the daemon's message, which names what was wrong.
func (e *RemoteError) Error() string { return e.Message }

// Unwrap gives the sentinel the daemon's answer stands for, if any.
func (e *RemoteError) Unwrap() error {
	switch e.code {
	case codeUnknownJob:
		return ErrUnknownJob
	case codeBadRequest:
		return ErrBadRequest
	case codeRefused:
		return ErrRefused
	case codeNoLog:
		return ErrNoLog
	}
	return nil
}

// answerError reads an error answer. A body that is not ours (an older or
// newer daemon) still gives the status.
func answerError(resp *http.Response) error {
	var body errorBody
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(data, &body) != nil || body.Error == "" {
		body.Error = fmt.Sprintf("cronvisor daemon answered %s", resp.Status)
	}
	return &RemoteError{Status: resp.StatusCode, Message: body.Error, code: body.Code}
}

// isNoRoute reports whether err is a daemon's answer that it has no such
// route, as an older daemon answers a newer route.
func isNoRoute(err error) bool {
	var re *RemoteError
	return errors.As(err, &re) && re.Status == http.StatusNotFound && re.code == ""
}
