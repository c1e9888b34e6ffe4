package service

import (
	"errors"
	"fmt"
	"io/fs"

	"cronvisor/internal/ctl"
	"cronvisor/internal/store/history"
)

// ReadRunLog reads the end of a run's saved log from stateDir, at most
// ctl.LogTail bytes, with its errors in the control socket's terms: no log
// is ctl.ErrNoLog, a name that cannot be a log file ctl.ErrBadRequest. The
// daemon, the embedded console and an offline console read logs through it.
func ReadRunLog(stateDir, job, runID string) (ctl.RunLog, error) {
	lines, omitted, err := history.ReadLog(stateDir, job, runID, ctl.LogTail)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ctl.RunLog{}, fmt.Errorf("%w for run %s of %s", ctl.ErrNoLog, runID, job)
	case errors.Is(err, history.ErrBadName):
		return ctl.RunLog{}, fmt.Errorf("%w: %w", ctl.ErrBadRequest, err)
	case err != nil:
		return ctl.RunLog{}, fmt.Errorf("log of run %s of %s: %w", runID, job, err)
	}
	return ctl.RunLog{Job: job, RunID: runID, Lines: lines, Omitted: omitted}, nil
}
