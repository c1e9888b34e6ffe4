package file

import (
	"strings"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// locksOn returns the locks of all that are on the file.
func locksOn(all []procfs.Lock, id procfs.FileID) []procfs.Lock {
	var out []procfs.Lock
	for _, lk := range all {
		if lk.On(id) {
			out = append(out, lk)
		}
	}
	return out
}

// ofRecord reports whether process pid is the record's run: its pid, its
// supervisor, or one of its processes by InRun.
func (l *Locker) ofRecord(pid int, rec lock.Record) bool {
	return pid == rec.PID || pid == rec.SupervisorPID || (rec.RunID != "" && l.inRun != nil && l.inRun(pid, rec.RunID))
}

// classify names the holder of a held lock. /proc/locks gives the pid that
// took the lock, but that process may be gone while the run's survivors
// still hold the file (the pid then reads 0, or the entry is hidden), and
// for `flock -n FILE cmd` it is flock(1)'s pid. So, in order:
//   - the locker is the record's pid or supervisor_pid, or this process
//     (which may not have written its record yet): cronvisor's;
//   - the locker is alive and has the file open: a foreign program;
//   - otherwise look at every process with the file open: one that is the
//     record's pid or supervisor, or belongs to the record's run by the
//     locker's InRun (a survivor of that run), makes it cronvisor's; else
//     the first such process is a foreign holder;
//   - nothing visible (another pid namespace): trust the record if any.
func (l *Locker) classify(rec lock.Record, haveRec bool, lockers []procfs.Lock, id procfs.FileID) lock.Record {
	self := procfs.Self()
	for _, lk := range lockers {
		if lk.PID == self && !haveRec {
			return lock.Record{Holder: run.Holder{PID: self, Host: l.host}, SupervisorPID: self}
		}
		if lk.PID > 0 && (lk.PID == self || lk.PID == rec.PID || lk.PID == rec.SupervisorPID) {
			return rec
		}
	}
	for _, lk := range lockers {
		if lk.PID > 0 && lk.PID != self && procfs.HasOpen(lk.PID, id) {
			return l.foreign(lk.PID)
		}
	}
	openers := procfs.Openers(id, self)
	if haveRec {
		for _, pid := range openers {
			if l.ofRecord(pid, rec) {
				return rec
			}
		}
	}
	switch {
	case len(openers) > 0:
		return l.foreign(openers[0])
	case haveRec:
		return rec
	case len(lockers) > 0:
		return l.foreign(lockers[0].PID)
	}
	return l.foreign(0)
}

// foreign describes a holder outside cronvisor from its /proc entry.
func (l *Locker) foreign(pid int) lock.Record {
	h := lock.Record{Holder: run.Holder{PID: pid, Host: l.host, Foreign: true}}
	if pid > 0 {
		argv, _ := procfs.Argv(pid)
		h.Cmdline = strings.Join(argv, " ")
		if st, err := procfs.ReadStat(pid); err == nil {
			h.Since = procfs.Started(st.Start)
		}
	}
	return h
}
