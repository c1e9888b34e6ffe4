package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// historyRecord is what the accounting reads of a history record.
type historyRecord struct {
	Job, Outcome, Reason string
	Slot                 time.Time `json:"scheduled_at"`
}

// readHistory reads every record of the daemon of config, stopped, with
// `cronvisor history --limit 0 --json`.
func readHistory(cronvisor, config string) ([]historyRecord, error) {
	cmd := exec.Command(cronvisor, "--config", config, "history", "--limit", "0", "--json")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s history: %w", cronvisor, err)
	}
	var recs []historyRecord
	for line := range strings.Lines(string(out)) {
		var rec historyRecord
		if json.Unmarshal([]byte(line), &rec) == nil && !rec.Slot.IsZero() {
			recs = append(recs, rec)
		}
	}
	return recs, nil
}

// slotsIn are the slots of the window [start, end) that rec stands for:
// its own, or, for a missed record ("N fires from T"), its run of N
// slots period apart from its slot.
func slotsIn(rec historyRecord, start, end time.Time, period time.Duration) []time.Time {
	var out []time.Time
	for i := range firesOf(rec.Reason) {
		if t := rec.Slot.Add(time.Duration(i) * period); !t.Before(start) && t.Before(end) {
			out = append(out, t)
		}
	}
	return out
}

// firesOf is how many slots a record stands for: "N fires from T" in a
// missed record's reason, 1 otherwise.
func firesOf(reason string) int {
	i := strings.LastIndex(reason, "(")
	if i < 0 || !strings.Contains(reason[i:], " fires from ") {
		return 1
	}
	count, _, _ := strings.Cut(reason[i+1:], " ")
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// countRecords counts, in cronvisor's history, the skips and the runs
// that did not end ok (a stamp never fails by itself) among the window's
// slots, and why.
func (r *latencyRun) countRecords(start, end time.Time) error {
	recs, err := r.history()
	if err != nil {
		return err
	}
	r.reasons = map[string]int{}
	for _, rec := range recs {
		if rec.Outcome == "ok" {
			continue
		}
		n := len(slotsIn(rec, start, end, r.period))
		if rec.Outcome == "skipped" {
			r.skipped += n
		} else {
			r.failed += n
		}
		if n > 0 {
			r.reasons[reasonKind(rec.Reason)] += n
		}
	}
	return nil
}

// recordedFires are the fires in [start, end) whose history record is
// a skip or a run that did not end ok.
func recordedFires(recs []historyRecord, start, end time.Time, period time.Duration) map[fire]bool {
	out := map[fire]bool{}
	for _, rec := range recs {
		if rec.Outcome == "ok" {
			continue
		}
		for _, t := range slotsIn(rec, start, end, period) {
			out[fire{rec.Job, t.UnixNano()}] = true
		}
	}
	return out
}
