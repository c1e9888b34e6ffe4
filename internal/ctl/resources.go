package ctl

import (
	"fmt"
	"net/http"
	"time"
)

// ResourceStatus is one declared resource: its slots, how many are held,
// each slot's holder (the last one for a free slot, if any), and the
// fires of this daemon waiting for one.
type ResourceStatus struct {
	Resource string         `json:"resource"`
	Size     int            `json:"size"`
	Held     int            `json:"held"`
	Slots    []SlotStatus   `json:"slots"`
	Waiters  []WaiterStatus `json:"waiters"`
}

// SlotStatus is one slot of a resource, Slot its index ("db/1" is slot 1
// of db).
type SlotStatus struct {
	Slot  int       `json:"slot"`
	Held  bool      `json:"held"`
	PID   int       `json:"pid,omitempty"`
	Host  string    `json:"host,omitempty"`
	Job   string    `json:"job,omitempty"`
	RunID string    `json:"run_id,omitempty"`
	Since time.Time `json:"since,omitzero"`
	// Foreign: held outside cronvisor (flock(1) on the slot's file), by
	// Cmdline, as a job lock can be.
	Foreign bool   `json:"foreign,omitempty"`
	Cmdline string `json:"cmdline,omitempty"`
}

// WaiterStatus is a fire waiting for a resource's slot until Until, when
// it gives up and is skipped.
type WaiterStatus struct {
	Job   string    `json:"job"`
	RunID string    `json:"run_id"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
}

// Waiting is what a waiting job's fire waits for: a slot of Resource, of
// which Held of Size were held when it began to wait, Since, up to Until.
type Waiting struct {
	RunID    string    `json:"run_id"`
	Resource string    `json:"resource"`
	Held     int       `json:"held"`
	Size     int       `json:"size"`
	Since    time.Time `json:"since"`
	Until    time.Time `json:"until"`
}

// String is how status says it: "waiting for db (2/2 held)".
func (w Waiting) String() string {
	return fmt.Sprintf("waiting for %s (%d/%d held)", w.Resource, w.Held, w.Size)
}

// resources answers GET /v1/resources.
func (s *server) resources(w http.ResponseWriter, r *http.Request) {
	res, err := s.b.Resources(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(res))
}
