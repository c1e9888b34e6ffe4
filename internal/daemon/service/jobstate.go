package service

import "cronvisor/internal/ctl"

// jobState is what the service's events made of a job: its status as
// ctl.Apply folds them (the console folds them with the same function),
// and the runs in flight, more than one only under overlap allow.
type jobState struct {
	status   ctl.JobStatus
	inFlight map[string]flight // by run id; nil until a run starts
}

// flight is a run in flight: its run_started, and whether it has passed
// its job's warn_after.
type flight struct {
	start      ctl.WireEvent
	slow       bool
	slowReason string
	beat       *ctl.WireEvent // its newest run_beat, nil for none
}

// seed gives each job its last outcome from history, so a fresh daemon
// shows what happened before it started.
func (s *Service) seed(recent StoredRuns) { s.seeded = recent }

// seededStatus is job's status as the history told at start-up: its
// newest run's outcome and times, zero without one.
func (s *Service) seededStatus(job string) ctl.JobStatus {
	var st ctl.JobStatus
	if sum, ok := s.seeded[job]; ok {
		st.LastOutcome, st.LastEndedAt, st.LastStartedAt = sum.Outcome, sum.EndedAt, sum.StartedAt
	}
	return st
}

// state returns the job's state, creating it from its seed; s.mu held or
// not yet shared.
func (s *Service) state(job string) *jobState {
	st := s.jobs[job]
	if st == nil {
		st = &jobState{status: s.seededStatus(job)}
		s.jobs[job] = st
	}
	return st
}

// resume makes the newest run still in flight the status's current run
// when the current one ended first (overlap allow), folding its start
// again: a start counts nothing, and the last start is the newest.
func (st *jobState) resume() {
	if st.status.RunID != "" || len(st.inFlight) == 0 {
		return
	}
	var cur flight
	for _, f := range st.inFlight {
		if cur.start.RunID == "" || f.start.StartedAt.After(cur.start.StartedAt) {
			cur = f
		}
	}
	ctl.Apply(&st.status, cur.start)
	if cur.slow {
		ctl.Apply(&st.status, ctl.WireEvent{Type: ctl.EventRunSlow, Job: cur.start.Job, RunID: cur.start.RunID,
			Reason: cur.slowReason})
	}
	if cur.beat != nil {
		ctl.Apply(&st.status, *cur.beat)
	}
}
