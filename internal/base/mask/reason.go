package mask

import (
	"errors"
	"strings"
)

// Reason is a driver's refusal of raw as a message may quote it: without
// the copy of raw it leads with (pgx's "cannot parse `…`: "), and
// scrubbed of raw's secrets. It is shared by config's checks and the lock
// backends' checks of their addresses, so both say it in the same words.
func Reason(err error, raw string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "cannot parse `"); ok {
		if i := strings.Index(rest, "`: "); i >= 0 {
			msg = rest[i+3:]
		}
	}
	return errors.New(Text(msg, raw))
}
