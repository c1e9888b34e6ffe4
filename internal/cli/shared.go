package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/daemon/service"
	"cronvisor/internal/store/fleet"
	"cronvisor/internal/store/history"
)

// sharedWait bounds a reading command's wait for the shared history:
// past it, this host's store answers.
const sharedWait = 5 * time.Second

// sharedHistory is the fleet's shared history for a command that only
// reads (history_backend: postgres), nil without one. When this shell
// cannot ask it (a variable its url needs is unset), one line on stderr
// says so and nil is returned: the command reads this host's store.
func sharedHistory(stderr io.Writer, cfg *config.Config) *fleet.Store {
	if cfg.HistoryBackend.Type != config.HistoryPostgres {
		return nil
	}
	if unset := cfg.HistoryUnsetEnv; len(unset) > 0 {
		fmt.Fprintf(stderr, "cronvisor: the shared history was not asked: history_backend.url needs %s, not set in this shell; showing this host's records\n",
			strings.Join(unset, ", "))
		return nil
	}
	host, _ := os.Hostname()
	s, err := fleet.Open(cfg.HistoryBackend.URL, host)
	if err != nil {
		sharedDown(stderr, err)
		return nil
	}
	return s
}

// sharedDown is the one line saying that the shared history did not
// answer and this host's records are shown instead.
func sharedDown(stderr io.Writer, err error) {
	fmt.Fprintf(stderr, "cronvisor: the shared history is unreachable (%v); showing this host's records\n", err)
}

// sharedRecords reads the records f asks for from the shared history;
// ok is false when there is none, or it did not answer (said on stderr).
func sharedRecords(stderr io.Writer, cfg *config.Config, filter history.Filter) (recs []run.Record, ok bool) {
	s := sharedHistory(stderr, cfg)
	if s == nil {
		return nil, false
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), sharedWait)
	defer cancel()
	recs, err := s.Query(ctx, filter)
	if err != nil {
		sharedDown(stderr, err)
		return nil, false
	}
	return recs, true
}

// sharedRecent is each job's last outcome, start and slot across the
// fleet; ok is false when there is no shared history, or it did not
// answer (said on stderr).
func sharedRecent(ctx context.Context, stderr io.Writer, cfg *config.Config) (service.StoredRuns, bool) {
	s := sharedHistory(stderr, cfg)
	if s == nil {
		return nil, false
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(ctx, sharedWait)
	defer cancel()
	names := make([]string, len(cfg.Jobs))
	for i, j := range cfg.Jobs {
		names[i] = j.Name
	}
	sums, err := s.Summaries(ctx, names)
	if err != nil {
		sharedDown(stderr, err)
		return nil, false
	}
	return sums, true
}
