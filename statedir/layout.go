package statedir

import "path/filepath"

// KeepersDir holds the Ends that keepers write for runs whose supervisor
// died (proc.WriteEnd), one file per run, until a supervisor records them.
const KeepersDir = "runs"

// RunEnd is where the keeper of run runID writes its End.
func RunEnd(dir, runID string) string {
	return filepath.Join(dir, KeepersDir, runID+".end")
}

// RunLog is where the output of a run is kept: STATE_DIR/logs/JOB/RUN_ID.log.
func RunLog(dir, job, runID string) string {
	return filepath.Join(dir, "logs", job, runID+".log")
}
