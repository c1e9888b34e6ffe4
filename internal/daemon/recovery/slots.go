package recovery

import (
	"context"
	"strings"

	"cronvisor/internal/lock"
)

// The resource slots of adopted runs: a dead supervisor's run holds its
// slots (fd 5 on, or its lease) while it goes on, and this daemon now
// answers for it, so they count as this daemon's (AdoptedSlots, for
// cronvisor_resource_slots_held) until the run is recorded.

// noteSlots looks up, once, the resource slots adopted run runID holds
// (Config.SlotsOf), unless it is no longer adopted by then.
func (r *Recoverer) noteSlots(runID string) {
	if r.cfg.SlotsOf == nil {
		return
	}
	r.mu.Lock()
	_, noted := r.slots[runID]
	r.mu.Unlock()
	if noted {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, lock.OpTimeout)
	slots := r.cfg.SlotsOf(ctx, runID)
	cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.adopted[runID]; ok {
		r.slots[runID] = slots
	}
}

// AdoptedSlots counts the slots the adopted runs hold, by resource.
func (r *Recoverer) AdoptedSlots() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, slots := range r.slots {
		for _, s := range slots {
			res, _, _ := strings.Cut(s, "/")
			out[res]++
		}
	}
	return out
}

// unadoptLocked forgets runID as adopted; r.mu is held.
func (r *Recoverer) unadoptLocked(runID string) {
	delete(r.adopted, runID)
	delete(r.slots, runID)
}
