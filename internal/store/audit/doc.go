// Package audit rebuilds the slots that the schedules owed over a window
// and classifies each from the history's records: ran once, skipped,
// missed, duplicated, or still open. It is pure: records and the time in,
// a report out.
package audit
