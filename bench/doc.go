// Package bench holds cronvisor's benchmarks of whole guarded runs and the
// tools behind BENCHMARKS.md: cmd/stamp and stamp/*.c (the job whose
// start is measured), cmd/cvbench (a real daemon measured from outside)
// and cmd/floor (the idle floor of cvbench compare).
//
// The guarded-run benchmarks live here rather than in runner because a
// package's benchmarks share its test process: runner's tests start the
// orphan reaper, which scans /proc on every SIGCHLD and would tax the
// bare-exec baseline too. Here neither side runs it; the daemon figures of
// cmd/cvbench include it.
//
// # cronvisor beside supercronic
//
// `SUPERCRONIC=BIN bench/run.sh compare [1|100|1000|burst|idle|rss ...]` measures
// cronvisor against supercronic and a bare floor in one run, on the same
// generated schedules: 1 job every second over FIRES fires (default 120,
// whatever DURATION says), 100 and 1,000 jobs every second over DURATION,
// and IDLE_JOBS (default 10,000) idle hourly jobs. Each rep runs the
// floor, then supercronic, then cronvisor, so that all three see the same
// machine; medians of REPS reps and their ratios are printed per part,
// then one markdown summary table. supercronic is not part of this repo:
// build it beside the project (git clone
// https://github.com/aptible/supercronic ../supercronic; cd ../supercronic;
// go build -o supercronic .) and pass its path.
//
// Fairness, in the order a reader would ask:
//   - Every side runs the same line through /bin/sh -c: `STAMP FILE JOB`
//     (supercronic has no other way; cronvisor gets it as a string
//     command; the floor runs /bin/sh -c itself from a Go timer).
//   - supercronic gets seven-field lines (`* * * * * * *`, gorhill/
//     cronexpr) and keeps its defaults: text log at info level on stderr
//     (a "starting" and a "job succeeded" line per run, as cronvisor logs
//     a start and an end record), no overlap (as cronvisor's overlap:
//     skip), reaping off (it reaps only as PID 1; cronvisor's orphan
//     reaper stays on, as it does by default). The one flag added is
//     -prometheus-listen-address on a free local port, so that both sides
//     serve metrics; the harness fetches its /metrics once, outside the
//     window.
//   - cronvisor keeps its default durability (machine: every record
//     synced; DURABILITY=process in bench/run.sh, -durability process to
//     cvbench, measures the opt-in that leaves the syncs out), serves metrics
//     (metrics.listen 127.0.0.1:0; its "serving metrics" record is
//     checked) and has one webhook target, on a local test server. notify
//     has no default `on:`, so the target takes the events that report a
//     problem (failure, timeout, skip, missed, recovered): a stamp run
//     that ends ok sends nothing, a skip does; the skips of fires due
//     while it stops ("supervisor stopping") are delivered after the
//     window and counted in the output.
//   - Start lateness is the stamp's clock reading minus the slot. cronvisor
//     and the floor pass the slot in CRONVISOR_SCHEDULED_AT; supercronic
//     does not, so the stamp writes "-" and the reader takes the start's
//     second, floored. A supercronic start later than a second would be
//     misread as an early start of the next slot; it shows as a missing
//     fire (and a doubled one when the next slot also started), counted
//     per job and second in the missing and doubled columns.
//   - CPU per fire is the daemon's own threads' CPU (schedstat; its
//     jobs excluded) and its keeper processes' (cronvisor-keeper, which
//     is handed every run and lets go of it) over the window, divided by
//     the window's starts.
//     The floor's is this harness process's.
//   - cronvisor's account of every fire (1,000 jobs a second above all):
//     each job's slot in the window has a start, or a skip or failure
//     record in its log, exactly once: a PASS or FAIL line per rep.
//     supercronic keeps no record of a skip: its starts against the
//     expected fires are printed.
//   - idle: cronvisor's history is seeded as for `bench/run.sh idle`;
//     supercronic and the floor (cmd/floor: the same crontab parsed into
//     one timer, nothing run) write no ready line, so start-up is measured
//     from exec until the CPU use settles (under 3 ms in a quarter of a
//     second) on every side; RSS and HWM after the idle span.
//   - burst: BURST_JOBS (default 1,000) jobs on `* * * * *` (five fields
//     on every side), all due at each minute boundary, for BURST_MINUTES
//     boundaries (default 3) and 20 s after the last. Each side starts
//     12 s before a boundary, so the window begins at it without a
//     minute's wait. cronvisor's jobs also have retries configured
//     (retries: 2, retry_backoff: 5s), which a job that never fails never
//     uses. supercronic's slotless stamps take the start's minute,
//     floored (a start up to 59 s late reads right). Per burst the last
//     start is kept; its p50 over the bursts is the figure to compare.
//   - rss: a daemon with 3 hourly jobs (none due), read 5 s after it is
//     ready: VmRSS, RssAnon and RssFile apart (/proc/PID/status), and
//     the daemon's keeper processes (argv[0] cronvisor-keeper, its
//     children or in its process group) if one runs: with nothing fired,
//     none does.
//   - The compare header prints both binaries' sizes: supercronic as
//     given and strip(1) of a copy; cronvisor as built, strip(1) of a
//     copy and built with -ldflags '-s -w' (the summary's figure).
//
// # The memory budget
//
// `bench/run.sh budget` (cvbench budget) prints, per group of
// dependencies of the unstripped binary: its bytes (go tool nm -size,
// symbols by package, packages by module from go version -m; symbols in
// NOBITS sections are BSS), the bytes of its symbols on pages resident
// in a 3-job daemon 5 s after it is ready (/proc/PID/pagemap's present
// bit), and its init clock and allocations (GODEBUG=inittrace=1
// cronvisor --version, median of BUDGET_REPS runs).
package bench
