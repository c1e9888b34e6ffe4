package file

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"cronvisor/internal/base/plainjson"
	"cronvisor/internal/lock"
)

// encodeRecord is json.Marshal(h), byte for byte, without reflection: a
// record is written three times a run (taken, its pid, let go), and
// encoding/json's reflection was most of that. Anything the fast path
// does not write exactly as encoding/json would (a string needing an
// escape, a time outside RFC 3339's years) takes json.Marshal;
// TestEncodeRecordIsJSONMarshal holds the two together, field by field.
func encodeRecord(h lock.Record) ([]byte, error) {
	if !plainRecord(h) {
		return json.Marshal(h)
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"pid":`...)
	b = strconv.AppendInt(b, int64(h.PID), 10)
	b = plainjson.AppendField(b, "host", h.Host)
	b = plainjson.AppendField(b, "job", h.Job)
	b = plainjson.AppendField(b, "run_id", h.RunID)
	if !h.Since.IsZero() {
		b = plainjson.AppendTime(append(b, `,"since":`...), h.Since)
	}
	if h.Foreign {
		b = append(b, `,"foreign":true`...)
	}
	if h.Cmdline != "" {
		b = plainjson.AppendField(b, "cmdline", h.Cmdline)
	}
	b = plainjson.AppendTime(append(b, `,"slot":`...), h.Slot)
	b = append(b, `,"supervisor_pid":`...)
	b = strconv.AppendInt(b, int64(h.SupervisorPID), 10)
	if len(h.Slots) > 0 {
		b = append(b, `,"slots":{`...)
		for i, job := range slices.Sorted(maps.Keys(h.Slots)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = plainjson.AppendTime(append(plainjson.AppendString(b, job), ':'), h.Slots[job])
		}
		b = append(b, '}')
	}
	if h.InFlight {
		b = append(b, `,"in_flight":true`...)
	}
	if !h.RetryAt.IsZero() {
		b = plainjson.AppendTime(append(b, `,"retry_at":`...), h.RetryAt)
	}
	return append(b, '}'), nil
}

// plainRecord tells whether every string of h needs no escape and every
// time has a year RFC 3339 can write, so that encodeRecord's fast path
// writes what encoding/json would.
func plainRecord(h lock.Record) bool {
	for _, s := range []string{h.Host, h.Job, h.RunID, h.Cmdline} {
		if !plainjson.String(s) {
			return false
		}
	}
	for _, t := range []time.Time{h.Since, h.Slot, h.RetryAt} {
		if !plainjson.Time(t) {
			return false
		}
	}
	for job, t := range h.Slots {
		if !plainjson.String(job) || !plainjson.Time(t) {
			return false
		}
	}
	return true
}
