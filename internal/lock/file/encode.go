package file

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

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
	b = appendField(b, "host", h.Host)
	b = appendField(b, "job", h.Job)
	b = appendField(b, "run_id", h.RunID)
	if !h.Since.IsZero() {
		b = appendTime(append(b, `,"since":`...), h.Since)
	}
	if h.Foreign {
		b = append(b, `,"foreign":true`...)
	}
	if h.Cmdline != "" {
		b = appendField(b, "cmdline", h.Cmdline)
	}
	b = appendTime(append(b, `,"slot":`...), h.Slot)
	b = append(b, `,"supervisor_pid":`...)
	b = strconv.AppendInt(b, int64(h.SupervisorPID), 10)
	if len(h.Slots) > 0 {
		b = append(b, `,"slots":{`...)
		for i, job := range slices.Sorted(maps.Keys(h.Slots)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendTime(append(appendString(b, job), ':'), h.Slots[job])
		}
		b = append(b, '}')
	}
	if h.InFlight {
		b = append(b, `,"in_flight":true`...)
	}
	if !h.RetryAt.IsZero() {
		b = appendTime(append(b, `,"retry_at":`...), h.RetryAt)
	}
	return append(b, '}'), nil
}

// plainRecord tells whether every string of h needs no escape and every
// time has a year RFC 3339 can write, so that encodeRecord's fast path
// writes what encoding/json would.
func plainRecord(h lock.Record) bool {
	for _, s := range []string{h.Host, h.Job, h.RunID, h.Cmdline} {
		if !plainString(s) {
			return false
		}
	}
	for _, t := range []time.Time{h.Since, h.Slot, h.RetryAt} {
		if !plainTime(t) {
			return false
		}
	}
	for job, t := range h.Slots {
		if !plainString(job) || !plainTime(t) {
			return false
		}
	}
	return true
}

// plainString: printable ASCII that encoding/json writes as it is (it
// escapes ", \ and, for HTML, <, > and &).
func plainString(s string) bool {
	for i := range len(s) {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// plainTime: a time whose MarshalJSON succeeds (years 0 to 9999, a zone
// offset under 24 hours).
func plainTime(t time.Time) bool {
	y := t.Year()
	_, offset := t.Zone()
	return y >= 0 && y <= 9999 && offset > -24*3600 && offset < 24*3600
}

func appendField(b []byte, key, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendTime writes t as time.Time's MarshalJSON does.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
