// Package runner is the engine: the scheduling loop and the guarded
// execution of runs, each under its lock and deadline, recorded through a
// Recorder and told to listeners as run's events. It imports no store, no
// screen and no face of the daemon.
package runner
