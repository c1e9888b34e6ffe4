package file

import "cronvisor/internal/lock"

// Backend is the flock(2) backend, the default: locks in files of the
// state dir, which take no address, ttl or prefix.
var Backend = lock.Backend{
	Name: "file",
	Open: func(s lock.Settings) (lock.Locker, error) {
		return NewLocker(s.LocksDir, s.InRun, WithDurability(s.Durability), WithCursorJournal(s.CursorsDir)), nil
	},
}
