package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
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
