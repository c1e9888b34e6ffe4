package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"
)

// KeptInfo is a run a keeper process keeps, as its socket tells it.
type KeptInfo struct {
	RunID, Job    string
	SupervisorPID int
}

// ErrNotKept means the keeper process does not keep that run (any more).
var ErrNotKept = errors.New("run not kept by that keeper")

// ErrKeeperSilent means a keeper process did not answer within
// askTimeout: it is frozen (SIGSTOP, a debugger) or starved.
var ErrKeeperSilent = errors.New("keeper not answering")

// askTimeout bounds a question to a keeper process: one that does not
// answer is taken for gone.
const askTimeout = 2 * time.Second

func dialKeeper(ctx context.Context, pid int) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", keeperAddress(pid))
}

// ask sends one request line (see keeperproto.go) to keeper process pid
// and returns its answer (everything up to the keeper's close).
func ask(pid int, line string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), askTimeout)
	defer cancel()
	c, err := dialKeeper(ctx, pid)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(askTimeout))
	if _, err := c.Write([]byte(line)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// KeptRuns lists the runs keeper process pid keeps.
func KeptRuns(pid int) ([]KeptInfo, error) {
	answer, err := ask(pid, request(verbRuns, ""))
	if err != nil {
		return nil, err
	}
	return parseRuns(answer), nil
}

// AskKept asks keeper process pid to end run runID as its supervisor
// would have (killed by operator, or replaced by a newer fire). A keeper
// that does not answer within askTimeout is ErrKeeperSilent: the run
// goes on unless the caller ends it otherwise.
func AskKept(pid int, runID string, replaced bool) error {
	verb := verbEnd
	if replaced {
		verb = verbReplace
	}
	answer, err := ask(pid, request(verb, runID))
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("keeper process %d: %w within %v", pid, ErrKeeperSilent, askTimeout)
	}
	if err != nil {
		return err
	}
	if strings.TrimSpace(answer) != answerOK {
		return ErrNotKept
	}
	return nil
}

// WatchKept returns once keeper process pid no longer keeps run runID
// (its End written and its lock let go, or the keeper gone), or ctx is
// done.
func WatchKept(ctx context.Context, pid int, runID string) error {
	c, err := dialKeeper(ctx, pid)
	if err != nil {
		return nil // no keeper: nothing keeps it
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.SetReadDeadline(time.Now()) })
	defer stop()
	if _, err := c.Write([]byte(request(verbWatch, runID))); err != nil {
		return nil
	}
	_, _ = io.Copy(io.Discard, c)
	return ctx.Err()
}
