// Package bench holds cronvisor's benchmarks of whole guarded runs and the
// tools behind BENCHMARKS.md: cmd/stamp (the job whose start is measured)
// and cmd/cvbench (a real daemon measured from outside).
//
// The guarded-run benchmarks live here rather than in runner because a
// package's benchmarks share its test process: runner's tests start the
// orphan reaper, which scans /proc on every SIGCHLD and would tax the
// bare-exec baseline too. Here neither side runs it; the daemon figures of
// cmd/cvbench include it.
package bench
