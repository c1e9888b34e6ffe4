// Package proc executes one run of a job: its own process group, output read
// line by line, a deadline enforced on the whole process tree, and reaping of
// the orphans a run leaves behind. It is Linux only.
//
// # What "the run" is
//
// A run is every process that belongs to it, found by scanning /proc:
//   - members of its process group (pgid = the main process's pid);
//   - processes whose environment holds Spec.Tag ("CRONVISOR_RUN_ID=…"),
//     which catches grandchildren that called setsid or double-forked;
//   - processes holding the same open file description as
//     Spec.ExtraFiles[0] (the run's lock file), compared with kcmp(2), so a
//     process that merely opened the same file itself (another supervisor,
//     `flock(1)` waiting for the lock, `cronvisor locks`) is never counted.
//
// A process that execs with a cleared environment, leaves the process group
// and closes fd 3 cannot be found (only cgroups could); it no longer holds
// the lock either. If it keeps the output pipes open, Run stops reading them
// shortly after the rest of the run is gone rather than wait for it.
//
// # Ending a run
//
// Like systemd's KillMode=control-group, a run is over only when nothing of
// it survives: when the main process exits, whatever it left behind gets
// SIGTERM, then SIGKILL after Spec.KillGrace. The same happens to the whole
// run at its deadline or on cancellation. This is what makes "the lock is
// free" mean "no process of the run is left", as the contract requires.
//
// # Reaping
//
// With EnableSubreaper, orphans of runs are reparented to this process
// instead of init and must be reaped by it; StartReaper does that without
// stealing the exit status of children that os/exec is waiting for.
package proc
