package file

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/lock"
)

// Replay puts back into the lock files the newer records that dead
// processes' cursor journals hold, makes every lock file those journals
// name durable, and removes the journals. A lock file is older than its
// journal only after a machine crash lost the page cache; after a crash of
// the process alone the files are as new, and only their sync is owed.
// It returns how many lock files it rewrote. Call it before lock records
// are read for a recovery or a slot check. Journals it could not finish
// stay for the next process.
func (l *Locker) Replay() (int, error) {
	if l.journal == nil {
		return 0, nil
	}
	orphans, newest, err := adoptJournals(l.journal.dir)
	defer func() {
		for _, f := range orphans {
			f.Close()
		}
	}()
	if err != nil || len(orphans) == 0 {
		return 0, err
	}
	rewritten := 0
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(newest)) {
		changed, err := l.replayOne(name, newest[name])
		if changed {
			rewritten++
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("lock %q: %w", name, err))
		}
	}
	if len(errs) > 0 {
		return rewritten, fmt.Errorf("cursor journal replay: %w", errors.Join(errs...))
	}
	for _, f := range orphans {
		if err := os.Remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := statedir.SyncDir(l.journal.dir); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return rewritten, fmt.Errorf("cursor journal replay: %w", errors.Join(errs...))
	}
	return rewritten, nil
}

// adoptJournals locks every journal in dir that no live process holds
// and reads the newest record of each lock from them. The files returned
// are held (flocked) until closed. Half-made journals (a crash between
// creation and rename) are among them: a rewrite's copy holds only
// records already written to their lock files, each newer than the
// journal's.
func adoptJournals(dir string) ([]*os.File, map[string]lock.Record, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cursor journals: %w", err)
	}
	newest := map[string]lock.Record{}
	var held []*os.File
	for _, e := range entries {
		if !e.Type().IsRegular() || !(strings.HasSuffix(e.Name(), journalSuffix) || strings.HasSuffix(e.Name(), ".tmp")) {
			continue
		}
		f, err := openFile(filepath.Join(dir, e.Name()), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		if err != nil {
			continue // gone meanwhile: another process adopted it
		}
		if locked, err := tryFlock(f, unix.LOCK_EX); !locked || err != nil {
			f.Close() // a live process's
			continue
		}
		data, err := os.ReadFile(f.Name())
		if err != nil {
			f.Close()
			return held, nil, fmt.Errorf("cursor journal: %w", err)
		}
		held = append(held, f)
		for line := range strings.SplitSeq(string(data), "\n") {
			name, h, ok := parseJournalLine([]byte(line))
			if !ok {
				continue // torn by the crash
			}
			if prev, seen := newest[name]; seen {
				h = newerRecord(prev, h)
			}
			newest[name] = h
		}
	}
	return held, newest, nil
}

// newerRecord is the newer of two records of one lock, by the time its
// run took the lock (a tie keeps a), with each job's slot cursor the
// later of the two: a cursor never goes back.
func newerRecord(a, b lock.Record) lock.Record {
	h := a.Clone()
	if b.Since.After(a.Since) {
		h = b.Clone()
	}
	for _, r := range []lock.Record{a, b} {
		for job, slot := range r.Slots {
			if slot.After(h.Slots[job]) {
				if h.Slots == nil {
					h.Slots = map[string]time.Time{}
				}
				h.Slots[job] = slot
			}
		}
	}
	return h
}

// replayOne brings lock name's file up to the journal's record h, if
// older, and syncs it. A lock held by a live process is only synced: its
// holder wrote its record after any crash that could have lost one.
func (l *Locker) replayOne(name string, h lock.Record) (bool, error) {
	path, err := l.path(name)
	if err != nil {
		return false, err
	}
	f, err := l.lockOnce(path)
	if err != nil {
		return false, err
	}
	if f == nil {
		g, err := openFile(path, inspectFlags)
		if err != nil {
			return false, err
		}
		defer g.Close()
		return false, syncData(g)
	}
	defer f.close()
	cur, had, size, err := readRecord(f.lock)
	if err != nil {
		return false, err
	}
	want := h
	if had {
		want = newerRecord(cur, h)
	}
	changed := !had || !sameRecord(cur, want)
	if changed {
		if _, _, err := writeRecord(f.record, want, size); err != nil {
			return false, err
		}
	}
	return changed, syncData(f.record)
}

// sameRecord reports whether a and b are written alike.
func sameRecord(a, b lock.Record) bool {
	ea, errA := encodeRecord(a)
	eb, errB := encodeRecord(b)
	return errA == nil && errB == nil && string(ea) == string(eb)
}
