package service

import (
	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock"
)

// HolderOf is who holds a lock, as the wire (and every layer) has it.
func HolderOf(rec lock.Record) *run.Holder {
	h := rec.Holder
	return &h
}

// LockStatusOf is a lock's wire form.
func LockStatusOf(s lock.Status) ctl.LockStatus {
	h := s.Record
	return ctl.LockStatus{
		Lock:          s.Name,
		Held:          s.Held,
		PID:           h.PID,
		Host:          h.Host,
		Job:           h.Job,
		RunID:         h.RunID,
		Slot:          h.Slot,
		Since:         h.Since,
		SupervisorPID: h.SupervisorPID,
		Foreign:       h.Foreign,
		Cmdline:       h.Cmdline,
	}
}
