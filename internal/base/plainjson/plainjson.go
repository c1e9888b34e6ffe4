// Package plainjson writes the JSON of small records that are written on
// every fire (a lock record, a run's guard file) without encoding/json's
// reflection, byte for byte as json.Marshal would, for the values it can:
// strings that need no escape and times RFC 3339 can write. A caller asks
// String and Time first and takes json.Marshal for anything else.
package plainjson

import "time"

// String reports whether s is printable ASCII that encoding/json writes
// as it is (it escapes ", \ and, for HTML, <, > and &).
func String(s string) bool {
	for i := range len(s) {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// Time reports whether t's MarshalJSON succeeds (years 0 to 9999, a zone
// offset under 24 hours).
func Time(t time.Time) bool {
	y := t.Year()
	_, offset := t.Zone()
	return y >= 0 && y <= 9999 && offset > -24*3600 && offset < 24*3600
}

// AppendField writes `,"key":"value"`; value must pass String.
func AppendField(b []byte, key, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return AppendString(b, value)
}

// AppendString writes s quoted; s must pass String.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// AppendTime writes t as time.Time's MarshalJSON does; t must pass Time.
func AppendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
