// Package e2e holds cronvisor's end-to-end tests: TestMain builds the
// binary from the module's root once, and every test runs it as real
// processes (daemons, `run`, the console under tmux) in a sandbox of its
// own, against real locks, Redis, MariaDB and PostgreSQL servers, and
// checks what they print, record and leave behind. The package has no
// code outside its tests.
//
// Under -short, the quick loop of development, the tests that take
// seconds are skipped: the soak tests, which run for many seconds or many
// rounds to catch a rare interleaving, and those that wait out real
// schedules, deadlines, lease TTLs or build from a clone. test.sh runs
// them all.
package e2e
