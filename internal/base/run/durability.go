package run

// Durability is what the records a state dir keeps survive: jobs.yaml's
// durability key. The zero value is DurabilityMachine.
type Durability string

const (
	// DurabilityMachine, the default: every write a guarantee rests on
	// (a run's history rows, the lock record's slot cursor, the history
	// spool) is synced to disk (fdatasync) before the guarantee is
	// given, so it survives a machine crash or a power cut.
	DurabilityMachine Durability = "machine"
	// DurabilityProcess: the same writes, in the same order, reach the
	// kernel's page cache but are not synced. The page cache outlives any
	// process, so every guarantee holds against a crash of cronvisor, its
	// keepers or its jobs; a crash of the machine may lose the last
	// writes. For a state dir on tmpfs (which a reboot empties anyway) or
	// in a container whose state does not outlive the host.
	DurabilityProcess Durability = "process"
)

// Durabilities are the values jobs.yaml accepts, the default first.
func Durabilities() []Durability {
	return []Durability{DurabilityMachine, DurabilityProcess}
}

// Syncs reports whether writes are synced to disk: for every value but
// DurabilityProcess.
func (d Durability) Syncs() bool { return d != DurabilityProcess }

// String is the value as jobs.yaml writes it; the zero value is "machine".
func (d Durability) String() string {
	if d == "" {
		return string(DurabilityMachine)
	}
	return string(d)
}
