package history

import (
	"context"
	"errors"
	"time"

	"modernc.org/sqlite"
)

// retryBusy calls f until it returns anything but SQLITE_BUSY or ctx ends.
func retryBusy(ctx context.Context, f func() error) error {
	wait := 5 * time.Millisecond
	for {
		err := f()
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqliteBusy {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// sqliteBusy is SQLITE_BUSY, the primary result code (the low byte of an
// extended one).
const sqliteBusy = 5
