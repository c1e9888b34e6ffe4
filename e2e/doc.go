// Package e2e holds cronvisor's end-to-end tests: TestMain builds the
// binary from the module's root once, and every test runs it as real
// processes (daemons, `run`, the console under tmux) in a sandbox of its
// own, against real locks, Redis, MariaDB and PostgreSQL servers, and
// checks what they print, record and leave behind. The package has no
// code outside its tests.
package e2e
