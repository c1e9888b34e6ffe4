package daemon

import "runtime/debug"

// startupHeapLimit bounds the heap while PauseGC holds the collector off.
const startupHeapLimit = 512 << 20

// PauseGC turns the collector off, up to startupHeapLimit, until the
// returned func turns it back on; call it before loading jobs.yaml and
// resume after New. Parsing jobs.yaml grows a node tree several times the
// jobs' size that is garbage once decoded: collections while it grows
// would each mark all of it again; with the collector off, the
// FreeOSMemory at the end of New marks only what survives.
func PauseGC() (resume func()) {
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(startupHeapLimit)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}
