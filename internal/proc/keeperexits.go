package proc

import (
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// exitTable is memory a supervisor shares with its keeper process (a
// memfd both map): for each slot, the generation of the deferred run
// that holds it and when the keeper saw that run's main process exit.
// The keeper writes the time as it sees the exit; the supervisor reads
// it without a message, so the exit's own time survives a frozen or
// starved supervisor (see keeperdefer.go).
type exitTable []byte

// exitSlots bounds the deferred runs of one keeper process in flight at
// once; a run beyond them is handed over eagerly.
const exitSlots = 4096

const exitEntry = 16 // generation, then exit time (Unix ns); 0: not seen

// newExitTable makes the table's memfd and maps it.
func newExitTable() (exitTable, int, error) {
	fd, err := unix.MemfdCreate("cronvisor-keeper-exits", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, -1, err
	}
	if err := unix.Ftruncate(fd, exitSlots*exitEntry); err != nil {
		unix.Close(fd)
		return nil, -1, err
	}
	t, err := mapExitTable(fd)
	if err != nil {
		unix.Close(fd)
		return nil, -1, err
	}
	return t, fd, nil
}

// mapExitTable maps the table's memfd.
func mapExitTable(fd int) (exitTable, error) {
	b, err := unix.Mmap(fd, 0, exitSlots*exitEntry, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	return exitTable(b), err
}

func (t exitTable) gen(slot int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&t[slot*exitEntry]))
}

func (t exitTable) exit(slot int) *atomic.Int64 {
	return (*atomic.Int64)(unsafe.Pointer(&t[slot*exitEntry+8]))
}

// claim gives slot to a new run: its next generation, no exit seen.
func (t exitTable) claim(slot int) uint64 {
	gen := t.gen(slot).Add(1)
	t.exit(slot).Store(0)
	return gen
}

// see records that the run of slot and gen exited at now; a slot that
// has passed on to another run since is left alone.
func (t exitTable) see(slot int, gen uint64, now time.Time) {
	if slot < 0 || slot >= exitSlots || t.gen(slot).Load() != gen {
		return
	}
	t.exit(slot).Store(now.UnixNano())
}

// seen is when the run of slot and gen, started at started, exited as
// the keeper saw it; zero if not seen. A time before the start is a
// late write for the slot's previous run, which claim raced with.
func (t exitTable) seen(slot int, gen uint64, started time.Time) time.Time {
	if t == nil || slot < 0 || slot >= exitSlots {
		return time.Time{}
	}
	ns := t.exit(slot).Load()
	if ns == 0 || t.gen(slot).Load() != gen {
		return time.Time{}
	}
	at := time.Unix(0, ns)
	if at.Before(started) {
		return time.Time{}
	}
	return at
}

// exitKey is an exit's epoll data: the slot and its generation (the
// generation's low 32 bits, as an epoll event carries 64 bits in all).
func exitKey(slot int, gen uint64) unix.EpollEvent {
	return unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: int32(slot), Pad: int32(uint32(gen))}
}

// seeKey records the exit an epoll event of exitKey tells.
func (t exitTable) seeKey(e unix.EpollEvent, now time.Time) {
	slot := int(e.Fd)
	if slot < 0 || slot >= exitSlots {
		return
	}
	if gen := t.gen(slot).Load(); uint32(gen) == uint32(e.Pad) {
		t.see(slot, gen, now)
	}
}

// exitSlotArg is the hand-over's -exit-slot value.
func exitSlotArg(slot int, gen uint64) string {
	return strconv.Itoa(slot) + ":" + strconv.FormatUint(gen, 10)
}

// parseExitSlot reads an -exit-slot value.
func parseExitSlot(v string) (exitSlotRef, error) {
	s, g, _ := strings.Cut(v, ":")
	slot, err := strconv.Atoi(s)
	if err != nil {
		return exitSlotRef{}, err
	}
	gen, err := strconv.ParseUint(g, 10, 64)
	if err != nil {
		return exitSlotRef{}, err
	}
	return exitSlotRef{slot: slot, gen: gen, set: true}, nil
}

// exitSlotRef is a deferred run's slot in its keeper's exitTable.
type exitSlotRef struct {
	slot int
	gen  uint64
	set  bool
}
