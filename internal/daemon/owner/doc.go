// Package owner decides which live host of a fleet fires each job's
// scheduled slots, so that a fleet sharing a history (history_backend:
// postgres) does not race every host for every slot: each job is owned by
// one live host that runs the same job, chosen by rendezvous
// (highest-random-weight) hashing of the host's and the job's names over
// the hosts a View lists. The lock and the slot ledger stay the safety
// net: ownership only keeps the other hosts from asking.
//
// A Gate holds the newest View (the daemon reads it from the hosts table
// every beat) and answers, for each fire, whether this host fires it. A
// host that is not the owner waits for a View read after the owner's
// fire: if the owner beat after it, the slot was the owner's; if it died
// or restarted before, the best-ranked other live host fires the slot
// late. A host whose View is stale (it cannot read the table) fires
// everything, as without ownership: the lock decides.
//
// Ownership is per job, not per slot: a job stays on one host while the
// fleet does not change, so its overlap policy (replace and queue act on
// this supervisor's own runs), its last-ok memo and its logs stay on one
// host, and the fleet's load spreads by jobs.
package owner
