package proc

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestEndRoomGrowsAndGivesBack: a keeper's room grows with the runs it
// keeps at once, never shrinks but for an End the disk refused, and is
// removed with the keeper.
func TestEndRoomGrowsAndGivesBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	r := newEndRoom(dir)
	size := func() int64 {
		st, err := os.Stat(r.path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	steps := []struct {
		name string
		do   func() bool
		want int64 // the room's size after
	}{
		{"one run", func() bool { return r.reserve(1) == nil }, endReserve},
		{"three runs", func() bool { return r.reserve(3) == nil }, 3 * endReserve},
		{"two runs again", func() bool { return r.reserve(2) == nil }, 3 * endReserve},
		{"one End given room", r.give, 2 * endReserve},
		{"another", r.give, endReserve},
		{"the last", r.give, 0},
		{"none left", func() bool { return !r.give() }, 0},
	}
	for _, st := range steps {
		if !st.do() {
			t.Fatalf("%s: failed", st.name)
		}
		if got := size(); got != st.want {
			t.Fatalf("%s: the room is %d bytes, want %d", st.name, got, st.want)
		}
	}
	r.remove()
	if _, err := os.Stat(r.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the room is left after remove: %v", err)
	}
}

// fullTmpfs mounts a tmpfs of size bytes on a new directory and fills it
// (the fill's path is returned): it needs root, as CI runs.
func fullTmpfs(t *testing.T, size string, before func(dir string)) (dir, fill string) {
	t.Helper()
	dir = t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "mode=0700,size="+size); err != nil {
		t.Fatalf("mounting a tmpfs (this test needs root): %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	if before != nil {
		before(dir)
	}
	fill = filepath.Join(dir, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for err == nil {
		_, err = f.Write(make([]byte, 4096))
	}
	if !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("filling the disk: %v", err)
	}
	return dir, fill
}

// TestAnEndOnAFullDiskTakesItsRoom: on a disk filled after the hand-over,
// an End written the plain way fails with ENOSPC; the keeper's End gives
// back its room, is written whole, and its notes say so.
func TestAnEndOnAFullDiskTakesItsRoom(t *testing.T) {
	var room *endRoom
	dir, _ := fullTmpfs(t, "256k", func(dir string) {
		room = newEndRoom(dir)
		if err := room.reserve(1); err != nil {
			t.Fatal(err)
		}
	})
	defer room.remove()
	e := End{RunID: "r1", Outcome: TimedOut, Ended: time.Now(), Reason: "exceeded timeout 5s"}
	if err := WriteEnd(filepath.Join(dir, "r2.end"), e, true); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("an End without room on a full disk: %v, want ENOSPC", err)
	}
	k := &kept{f: keeperFlags{end: filepath.Join(dir, "r1.end")}}
	if err := k.writeEnd(e, room, 1, 0); err != nil {
		t.Fatalf("the End with its room: %v", err)
	}
	got, err := ReadEnd(k.f.end)
	if err != nil || got.Reason != e.Reason || len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "no space left on device") {
		t.Errorf("ReadEnd: %+v, %v; want the End, noting the full disk", got, err)
	}
}

// TestAnEndWithoutRoomIsRetried: with no room (the disk full at the
// hand-over already), the End's write is tried again for a bound, then
// given up (ENOSPC); once the disk has room again it is written, its
// notes saying how late.
func TestAnEndWithoutRoomIsRetried(t *testing.T) {
	dir, fill := fullTmpfs(t, "128k", nil)
	room := newEndRoom(dir)
	if err := room.reserve(1); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("reserve on a full disk: %v, want ENOSPC", err)
	}
	defer room.remove()
	k := &kept{f: keeperFlags{end: filepath.Join(dir, "r1.end")}}
	e := End{RunID: "r1", Outcome: TimedOut, Ended: time.Now()}
	start := time.Now()
	if err := k.writeEnd(e, room, 3, 10*time.Millisecond); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("writeEnd on a full disk: %v, want ENOSPC", err)
	}
	if took := time.Since(start); took < 20*time.Millisecond {
		t.Errorf("3 tries 10 ms apart took %v", took)
	}
	freed := make(chan error, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { freed <- k.writeEnd(e, room, 500, 10*time.Millisecond) })
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	if err := <-freed; err != nil {
		t.Fatal(err)
	}
	if got, err := ReadEnd(k.f.end); err != nil || got.RunID != "r1" {
		t.Errorf("ReadEnd: %+v, %v", got, err)
	}
}

// TestStaleRoomsAreRemoved: a keeper's start removes the rooms of keepers
// that are gone, and only those.
func TestStaleRoomsAreRemoved(t *testing.T) {
	dir := t.TempDir()
	const deadPID = 1<<22 + 7 // above PID_MAX_LIMIT: no process has it
	names := map[string]bool{ // name: kept
		"keeper-" + strconv.Itoa(deadPID) + ".reserve":     false,
		"keeper-" + strconv.Itoa(os.Getpid()) + ".reserve": true,
		"r3.end": true,
	}
	for name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleRooms(dir)
	for name, kept := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != kept {
			t.Errorf("%s: %v, want kept %v", name, err, kept)
		}
	}
}
