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
//     Spec.ExtraFiles[0] (the run's lock file, or its SQL lock's session
//     socket), compared with kcmp(2), so a process that merely opened the
//     same file itself (another supervisor, `flock(1)` waiting for the
//     lock, `cronvisor locks`) is never counted.
//
// A process that execs with a cleared environment, leaves the process group
// and closes fd 3 cannot be found by these means; it no longer holds the
// lock either. If it keeps the output pipes open, Run stops reading them
// shortly after the rest of the run is gone rather than wait for it.
//
// # Runs in a cgroup
//
// With Spec.Cgroup, the run is instead every process of its own cgroup v2
// leaf (package cgroup): the main process is started straight into it
// (clone3's CLONE_INTO_CGROUP), and whatever it forks stays there, so
// nothing escapes. Ending the run is SIGTERM to every process of the
// leaf, cgroup.kill after KillGrace; the run is over when the leaf is
// empty (cgroup.events), and only then does Run return, so a caller
// that releases the lock after Run holds it until then. Result.Usage is
// read from the leaf, which is then removed. The keeper, started before
// the run and outside its leaf, is given the leaf's path and, once the
// supervisor is dead, ends the run the same way. A leaf that cannot be
// made leaves the run to the process-tree scan above; Spec.Limits that
// cannot be applied fail its start.
//
// # Ending a run
//
// Like systemd's KillMode=control-group, a run is over only when nothing of
// it survives: when the main process exits, whatever it left behind gets
// SIGTERM, then SIGKILL after Spec.KillGrace. The same happens to the whole
// run at its deadline or on cancellation. This is what makes "the lock is
// free" mean "no process of the run is left", as the contract requires.
//
// # Guarded runs
//
// A run's processes inherit its lock file, so a flock outlives a dead
// supervisor exactly as long as the run does. A lock that nothing of the
// run holds (a Redis lease) instead expires while the run goes on, unless
// the run ends first. Spec.Keeper does that: before the run, Run hands
// it to a keeper process, this executable again under argv[0]
// KeeperName in a process group of its own, one per supervisor (Keepers)
// and started at its first run. Each run comes with a tether, a socket
// pair whose other end only the supervisor has. The supervisor's death,
// however it comes (SIGKILL, a crash), closes every tether; the keeper
// reads their ends and ends each guarded run as a deadline would, with a
// grace short enough (Keeper.Within, with EndAtOnce) to finish before
// the lease can expire. Most runs are handed over deferred
// (keeperdefer.go): their descriptors wait in the tether, the keeper is
// not woken for them but at their exit, and at the run's end Run takes
// them back. A run under a lease or a session is handed over eagerly,
// on the control socket: if the keeper dies first, Run ends the run
// (ErrGuardExited) rather than leave it unguarded; when the run is over,
// Run says "stop" on the tether and waits for the keeper to let go of its
// copies of the run's descriptors (the lock's among them). The keeper's
// files are keeper*.go; every message it exchanges, on the control
// socket, the mailbox, the tethers and its own socket, is in
// keeperproto.go. The run itself is started as without a guard: same
// process, group, environment, descriptors, output and exit status.
//
// What the guard covers is what the package finds as the run: its
// process group and the processes carrying its tag (setsid'd or
// double-forked descendants included). A descendant that cleared its
// environment and left the group escapes it, as it escapes a deadline.
// PR_SET_PDEATHSIG would not do: it reaches the main process only, not its
// group, and fires when the forking thread ends, not the process.
//
// # Starting many at once
//
// Forks are one at a time (os/exec's ForkLock), and each copies every
// descriptor of this process into the child, which closes them at its
// exec. So a run makes its descriptors (output pipes, leaf, the keeper's
// tether) only once it passes the start gate (startgate.go), which lets
// a few through at a time: fires due together wait there holding their
// locks alone, not at the fork with all of theirs.
//
// # Reaping
//
// With EnableSubreaper, orphans of runs are reparented to this process
// instead of init and must be reaped by it; StartReaper does that without
// stealing the exit status of children that os/exec is waiting for.
package proc
