package file

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"cronvisor/internal/lock"
)

// decodeRecord is json.Unmarshal of one line into a lock.Record, without
// reflection for what encodeRecord's fast path writes: every fire reads
// its lock's previous record, and encoding/json's reflection was most of
// that. Anything else (whitespace, escapes, null, an unknown or repeated
// key, a number out of range) takes json.Unmarshal, so the two agree on
// every line (FuzzDecodeRecord).
func decodeRecord(line []byte) (lock.Record, bool) {
	if h, ok := decodePlain(line); ok {
		return h, true
	}
	var h lock.Record
	return h, json.Unmarshal(line, &h) == nil
}

// plainDecoder walks a line as encodeRecord's fast path writes it.
type plainDecoder struct {
	b    []byte
	fail bool
}

// decodePlain decodes line if it is plain (see decodeRecord); ok false
// says only that the fast path does not take it.
func decodePlain(line []byte) (h lock.Record, ok bool) {
	d := plainDecoder{b: line}
	if !d.byte('{') {
		return h, false
	}
	var seen uint16
	for first := true; !d.fail && !d.byte('}'); first = false {
		if !first && !d.byte(',') {
			return h, false
		}
		key := d.raw()
		if !d.byte(':') {
			return h, false
		}
		bit, ok := recordKeys[string(key)]
		if !ok || seen&bit != 0 {
			return h, false // unknown keys and repeats: encoding/json's rules
		}
		seen |= bit
		switch string(key) {
		case "pid":
			h.PID = d.int()
		case "supervisor_pid":
			h.SupervisorPID = d.int()
		case "host":
			h.Host = d.string()
		case "job":
			h.Job = d.string()
		case "run_id":
			h.RunID = d.string()
		case "cmdline":
			h.Cmdline = d.string()
		case "since":
			h.Since = d.time()
		case "slot":
			h.Slot = d.time()
		case "retry_at":
			h.RetryAt = d.time()
		case "foreign":
			h.Foreign = d.bool()
		case "in_flight":
			h.InFlight = d.bool()
		case "slots":
			h.Slots = d.slots()
		}
	}
	return h, !d.fail && len(d.b) == 0
}

// recordKeys are the keys decodePlain takes, each with its bit.
var recordKeys = map[string]uint16{"pid": 1 << 0, "host": 1 << 1, "job": 1 << 2, "run_id": 1 << 3,
	"since": 1 << 4, "foreign": 1 << 5, "cmdline": 1 << 6, "slot": 1 << 7, "supervisor_pid": 1 << 8,
	"slots": 1 << 9, "in_flight": 1 << 10, "retry_at": 1 << 11}

// byte consumes c if it comes next.
func (d *plainDecoder) byte(c byte) bool {
	if len(d.b) > 0 && d.b[0] == c {
		d.b = d.b[1:]
		return true
	}
	return false
}

// string reads a quoted string of printable ASCII without escapes, which
// encoding/json would decode to the same bytes.
func (d *plainDecoder) string() string { return string(d.raw()) }

// raw is string's bytes, not copied.
func (d *plainDecoder) raw() []byte {
	if !d.byte('"') {
		d.fail = true
		return nil
	}
	end := bytes.IndexByte(d.b, '"')
	if end < 0 {
		d.fail = true
		return nil
	}
	s := d.b[:end]
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			d.fail = true
			return nil
		}
	}
	d.b = d.b[end+1:]
	return s
}

// int reads an integer as JSON writes one (no fraction, no exponent, no
// leading zero) that fits an int.
func (d *plainDecoder) int() int {
	n := 0
	for n < len(d.b) && (d.b[n] == '-' && n == 0 || d.b[n] >= '0' && d.b[n] <= '9') {
		n++
	}
	digits := d.b[:n]
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		d.fail = true
		return 0
	}
	v, err := strconv.Atoi(string(d.b[:n]))
	if err != nil {
		d.fail = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *plainDecoder) bool() bool {
	switch {
	case bytes.HasPrefix(d.b, []byte("true")):
		d.b = d.b[4:]
		return true
	case bytes.HasPrefix(d.b, []byte("false")):
		d.b = d.b[5:]
		return false
	}
	d.fail = true
	return false
}

// time reads a quoted time as time.Time's UnmarshalJSON does, which is
// what encoding/json calls.
func (d *plainDecoder) time() time.Time {
	var t time.Time
	if len(d.b) == 0 || d.b[0] != '"' {
		d.fail = true
		return t
	}
	end := bytes.IndexByte(d.b[1:], '"')
	if end < 0 || bytes.IndexByte(d.b[1:end+1], '\\') >= 0 || t.UnmarshalJSON(d.b[:end+2]) != nil {
		d.fail = true
		return t
	}
	d.b = d.b[end+2:]
	return t
}

// slots reads the slots object: job names to times.
func (d *plainDecoder) slots() map[string]time.Time {
	if !d.byte('{') {
		d.fail = true
		return nil
	}
	m := map[string]time.Time{}
	for first := true; !d.fail && !d.byte('}'); first = false {
		if !first && !d.byte(',') {
			d.fail = true
			return nil
		}
		job := d.string()
		if !d.byte(':') {
			d.fail = true
			return nil
		}
		if _, dup := m[job]; dup {
			d.fail = true
			return nil
		}
		m[job] = d.time()
	}
	return m
}
