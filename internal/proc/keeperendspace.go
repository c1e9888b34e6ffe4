package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// endReserve is the room kept for one run's End: an End is a few hundred
// bytes, its reasons and notes a few KiB at most.
const endReserve = 16 << 10

// endRoom is a keeper process's room for the Ends of the runs it keeps:
// endReserve bytes a run, in one file (STATE_DIR/runs/keeper-PID.reserve)
// allocated as the number of runs it keeps at once grows, so that a disk
// the runs (or anything else) fill meanwhile cannot lose an End: a write
// the disk refuses gives back one End's room and is tried again. It costs
// a run nothing but when that number reaches a new high.
type endRoom struct {
	mu   sync.Mutex
	path string
	fd   int   // -1 until the first run, or when none could be made
	have int64 // bytes reserved
}

func newEndRoom(dir string) *endRoom {
	if dir == "" {
		return nil
	}
	return &endRoom{path: filepath.Join(dir, "keeper-"+strconv.Itoa(os.Getpid())+".reserve"), fd: -1}
}

// reserve makes room for the Ends of runs runs; an error says it could not.
func (r *endRoom) reserve(runs int) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	want := int64(runs) * endReserve
	if r.have >= want {
		return nil
	}
	if r.fd < 0 {
		if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
			return err
		}
		fd, err := unix.Open(r.path, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return &os.PathError{Op: "open", Path: r.path, Err: err}
		}
		r.fd = fd
	}
	err := unix.Fallocate(r.fd, 0, 0, want)
	if errors.Is(err, unix.EOPNOTSUPP) {
		_, err = unix.Pwrite(r.fd, make([]byte, want-r.have), r.have) // blocks of its own all the same
	}
	if err != nil {
		return fmt.Errorf("reserving room for %d runs' ends in %s: %w", runs, r.path, err)
	}
	r.have = want
	return nil
}

// give gives back one End's room, for an End the disk refused; false if
// there is none left.
func (r *endRoom) give() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.have < endReserve || unix.Ftruncate(r.fd, r.have-endReserve) != nil {
		return false
	}
	r.have -= endReserve
	return true
}

// remove removes the file, once the keeper keeps no run.
func (r *endRoom) remove() {
	if r == nil || r.fd < 0 {
		return
	}
	_ = os.Remove(r.path)
	unix.Close(r.fd)
	r.fd = -1
}

// endTries and endRetryEvery bound how long a keeper tries to write an
// End that neither the disk nor its room took (the disk was full when the
// run was handed over), holding the run's lock meanwhile: what fills a
// disk is often the run's own, and gone with it.
const (
	endTries      = 30
	endRetryEvery = time.Second
)

// writeEnd writes the run's End: into the room reserved for it when the
// disk refuses it, and tries times at most, every so often, when neither
// takes it; its notes say so.
func (k *kept) writeEnd(e End, room *endRoom, tries int, every time.Duration) error {
	sync := !k.f.noSync
	err := WriteEnd(k.f.end, e, sync)
	if err != nil && room.give() {
		e.Notes = append(slices.Clone(e.Notes), fmt.Sprintf(
			"writing the run's end: %v; written into the room its keeper had reserved", err))
		err = WriteEnd(k.f.end, e, sync)
	}
	first := err
	for i := 1; err != nil && i < tries; i++ {
		time.Sleep(every)
		retry := e
		retry.Notes = append(slices.Clone(e.Notes),
			fmt.Sprintf("writing the run's end: %v; written %v later", first, time.Duration(i)*every))
		err = WriteEnd(k.f.end, retry, sync)
	}
	return err
}

// removeStaleRooms removes the rooms in dir of keeper processes that are
// gone (SIGKILLed before they could remove them).
func removeStaleRooms(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		digits, ok := strings.CutPrefix(e.Name(), "keeper-")
		digits, ok2 := strings.CutSuffix(digits, ".reserve")
		pid, err := strconv.Atoi(digits)
		if ok && ok2 && err == nil && pid > 0 && unix.Kill(pid, 0) == unix.ESRCH {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
