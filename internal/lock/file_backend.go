package lock

// File is the flock(2) backend, the default: locks in files of the state
// dir, which take no address, ttl or prefix.
var File = Backend{
	Name: "file",
	Open: func(s Settings) (Locker, error) {
		return NewFileLocker(s.LocksDir, s.InRun, WithDurability(s.Durability)), nil
	},
}
