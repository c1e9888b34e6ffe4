package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/store/audit"
	"cronvisor/internal/store/history"
)

type auditFlags struct {
	job    string
	since  string
	asJSON bool
}

func newAudit(g *globals) *cobra.Command {
	var f auditFlags
	c := &cobra.Command{
		Use:   "audit",
		Short: "Every slot the schedules owed, classified: ran, skipped, missed, duplicated, open",
		Long: `Rebuilds every slot the schedules of jobs.yaml's jobs owed over the window,
each by the schedule in force at its instant (as the daemon recorded it at
each start-up and reload), and classifies each from the history: ran
(once; an overlap: allow job's copies on several hosts are one ran slot),
skipped, missed, duplicated, open. Runs an operator started (run,
trigger, the console's run key) are in no count. Prints the slots that
need a look, the counts per job and a summary; exits 1 when any slot was
missed or duplicated.`,
		Example: `  cronvisor audit
  cronvisor audit --job sync_orders --since 7d
  cronvisor audit --json | jq 'select(.class == "missed")'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAudit(g, f) },
	}
	c.Flags().StringVar(&f.job, "job", "", "only this job")
	c.Flags().StringVar(&f.since, "since", "24h", "judge the slots of the last DURATION (e.g. 90m, 24h, 1d, 2w)")
	c.Flags().BoolVar(&f.asJSON, "json", false, "one JSON object per slot per line; the summary on stderr")
	return c
}

func runAudit(g *globals, f auditFlags) error { return auditAt(g, f, time.Now()) }

// auditAt is the audit at now.
func auditAt(g *globals, f auditFlags, now time.Time) error {
	since, err := parseSince(f.since)
	if err == nil && since == 0 {
		err = errors.New("must be more than 0")
	}
	if err != nil {
		return usageError("--since %q: %v", f.since, err)
	}
	cfg, _, err := readConfig(g)
	if err != nil {
		return err
	}
	jobs, err := jobsNamed(g, cfg, f.job)
	if err != nil {
		return err
	}
	from := now.Add(-since)
	h, err := auditRecords(context.Background(), g.stderr, cfg, f.job, from, now)
	if err != nil {
		return exitCode(1, err)
	}
	if h.began.IsZero() {
		fmt.Fprintf(g.stderr, "cronvisor: no history yet in %s: no slot to judge\n", cfg.StateDir)
	} else if h.began.After(from) {
		fmt.Fprintf(g.stderr, "cronvisor: the history begins %s: earlier slots are not judged\n", h.began.Format(time.RFC3339))
	}
	rep := audit.Audit(audit.Input{Jobs: jobs, Records: h.records, Versions: h.versions, Since: from, Now: now,
		Began: h.began, KeepRuns: h.keepRuns})
	if f.asJSON {
		err = printAuditJSON(g, rep)
	} else {
		printAuditText(g, rep)
	}
	if err != nil {
		return exitCode(1, err)
	}
	if rep.Failed() {
		return exitCode(1, nil)
	}
	return nil
}

// auditHistory is what audit reads from the history.
type auditHistory struct {
	records []run.Record // the records of the window
	// versions are the versions of the jobs' schedules the daemons
	// applied, for judging each slot by the one in force at its instant.
	versions []run.ScheduleVersion
	// began is when the history began: its oldest record, or the horizon
	// of its keep_age when that is later (older records were pruned). Zero
	// when it holds none.
	began time.Time
	// keepRuns is how many records of each job the history keeps (0: no
	// bound); see audit.Input.KeepRuns.
	keepRuns int
}

// auditRecords reads the records of job ("" for every job) since since,
// and when the history began: the one place audit reads the history.
func auditRecords(ctx context.Context, stderr io.Writer, cfg *config.Config, job string, since, now time.Time) (auditHistory, error) {
	if h, ok := sharedAuditRecords(ctx, stderr, cfg, job, since); ok {
		return h, nil
	}
	store, err := history.OpenReadOnly(statedir.Dir(cfg.StateDir).History())
	if errors.Is(err, history.ErrNoHistory) {
		return auditHistory{}, nil
	}
	if err != nil {
		return auditHistory{}, err
	}
	defer store.Close()
	h := auditHistory{keepRuns: cfg.History.KeepRuns}
	if h.began, err = store.Oldest(ctx); err != nil || h.began.IsZero() {
		return auditHistory{}, err
	}
	if cfg.History.KeepAge > 0 {
		h.began = laterOf(h.began, now.Add(-cfg.History.KeepAge))
	}
	if h.records, err = store.Query(ctx, history.Filter{Job: job, Since: since, Limit: 0}); err != nil {
		return auditHistory{}, err
	}
	h.versions, err = store.Schedules(ctx, job)
	return h, err
}

// sharedAuditRecords reads the fleet's shared history for audit
// (history_backend: postgres); ok is false when there is none, or it did
// not answer (said on stderr), and this host's store is read instead. The
// shared history is not pruned by keep_runs, only its window by keep_age.
func sharedAuditRecords(ctx context.Context, stderr io.Writer, cfg *config.Config, job string, since time.Time) (h auditHistory, ok bool) {
	s := sharedHistory(stderr, cfg)
	if s == nil {
		return h, false
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(ctx, sharedWait)
	defer cancel()
	began, err := s.Oldest(ctx)
	if err == nil {
		h.began = began
		h.records, err = s.Query(ctx, history.Filter{Job: job, Since: since, Limit: 0})
	}
	if err == nil {
		h.versions, err = s.Schedules(ctx, job)
	}
	if err != nil {
		sharedDown(stderr, err)
		return auditHistory{}, false
	}
	if cfg.History.KeepAge > 0 && !h.began.IsZero() {
		h.began = laterOf(h.began, time.Now().Add(-cfg.History.KeepAge))
	}
	return h, true
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// printAuditText prints the slots that need a look (neither ran nor
// skipped, and the runs no schedule owed), each job's counts, then the
// summary line.
func printAuditText(g *globals, rep audit.Report) {
	w := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	header := false
	for _, jr := range rep.Jobs {
		for _, s := range mergeSlots(jr.Slots, jr.Extra) {
			if s.Class == audit.Ran || s.Class == audit.Skipped {
				continue
			}
			if !header {
				fmt.Fprintln(w, "JOB\tSLOT\tCLASS\tHOST\tREASON")
				header = true
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.Job, s.At.Format(time.RFC3339Nano), s.Class, dash(s.Host), dash(s.Reason))
		}
	}
	_ = w.Flush()
	if header {
		fmt.Fprintln(g.stdout)
	}
	for _, jr := range rep.Jobs {
		extra := ""
		if len(jr.Extra) > 0 {
			extra = fmt.Sprintf("; %d run(s) off the schedule", len(jr.Extra))
		}
		fmt.Fprintf(g.stdout, "%s: %s%s\n", jr.Job, jr.Counts, extra)
	}
	fmt.Fprintln(g.stdout, rep.Total)
}

// mergeSlots is a job's slots and its extras in time order.
func mergeSlots(slots, extra []audit.Slot) []audit.Slot {
	out := make([]audit.Slot, 0, len(slots)+len(extra))
	i := 0
	for _, s := range slots {
		for ; i < len(extra) && extra[i].At.Before(s.At); i++ {
			out = append(out, extra[i])
		}
		out = append(out, s)
	}
	return append(out, extra[i:]...)
}

// auditLine is one slot in --json.
type auditLine struct {
	Job      string      `json:"job"`
	Slot     string      `json:"slot"`
	Class    audit.Class `json:"class"`
	Host     string      `json:"host"`
	Outcome  run.Outcome `json:"outcome"`
	Attempts int         `json:"attempts"`
	Copies   int         `json:"copies"`
	Reason   string      `json:"reason"`
	RunIDs   []string    `json:"run_ids"`
}

// printAuditJSON prints every slot (and run off the schedule) as one JSON
// object per line, and the summary on stderr.
func printAuditJSON(g *globals, rep audit.Report) error {
	enc := json.NewEncoder(g.stdout)
	for _, jr := range rep.Jobs {
		for _, s := range mergeSlots(jr.Slots, jr.Extra) {
			l := auditLine{Job: s.Job, Slot: s.At.Format(time.RFC3339Nano), Class: s.Class, Host: s.Host,
				Outcome: s.Outcome, Attempts: s.Attempts, Copies: s.Copies, Reason: s.Reason, RunIDs: s.RunIDs}
			if l.RunIDs == nil {
				l.RunIDs = []string{}
			}
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(g.stderr, strings.TrimSpace(rep.Total.String()))
	return nil
}
