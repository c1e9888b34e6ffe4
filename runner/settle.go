package runner

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerSettle sleeps the last stretch before a fire on a timerfd that the
// runtime's poller waits on. The kernel ends it as precisely as
// nanosleep(2), but no thread sits in a blocking system call meanwhile:
// with nothing else to do every processor is idle, so the runtime's
// monitor thread sleeps too, where a thread blocked in nanosleep kept it
// waking every 20 µs for the whole stretch (a context switch each).
type timerSettle struct {
	fd int      // the timer, armed through this descriptor
	f  *os.File // the same timer, read through the poller
}

// openTimerSettle makes the timer; an error leaves the caller to
// nanosleep.
func openTimerSettle() (*timerSettle, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("timerfd_create", err)
	}
	// A non-blocking descriptor: os.NewFile registers it with the poller.
	return &timerSettle{fd: fd, f: os.NewFile(uintptr(fd), "settle")}, nil
}

// sleep returns once d has passed, on the timer; if the timer cannot be
// armed or read, in nanosleep(2).
func (t *timerSettle) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(t.fd, 0, &spec, nil); err != nil {
		sleepPrecise(d)
		return
	}
	var expirations [8]byte
	if _, err := t.f.Read(expirations[:]); err != nil {
		sleepPrecise(d)
	}
}

func (t *timerSettle) close() { t.f.Close() }
