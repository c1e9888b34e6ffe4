package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/testlog"
)

func spoolWrite(id string) Write {
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	code := 0
	return Write{Kind: WriteFinish, Record: run.Record{Job: "job", RunID: id, Outcome: run.OK,
		ScheduledAt: at, StartedAt: at, EndedAt: at.Add(time.Second), ExitCode: &code, Host: "h", SupervisorPID: 7, PID: 8}}
}

// TestSpoolKeepsUsage: a held record keeps what its run cost, exactly,
// through the spool; an entry without one (not measured, or written
// before the cost existed) reads as not measured.
func TestSpoolKeepsUsage(t *testing.T) {
	measured := run.Usage{Measured: true, CPUUser: 520123 * time.Microsecond, CPUSystem: 31 * time.Microsecond,
		MemoryPeak: 120 << 20, OOMKilled: true}
	dir := t.TempDir()
	s := newSpool(t, dir, 1<<16)
	w := spoolWrite("measured")
	w.Record.Usage = measured
	if err := s.Append([]Write{w, spoolWrite("not measured")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(true); err != nil {
		t.Fatal(err)
	}
	a, err := AdoptSpools(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	want := map[string]run.Usage{"measured": measured, "not measured": {}}
	if len(a.Writes) != len(want) {
		t.Fatalf("adopted %d writes, want %d", len(a.Writes), len(want))
	}
	for _, w := range a.Writes {
		if got := w.Record.Usage; got != want[w.Record.RunID] {
			t.Errorf("%s: usage %+v, want %+v", w.Record.RunID, got, want[w.Record.RunID])
		}
	}
}

// newSpool is CreateSpool, failing the test on an error.
func newSpool(t *testing.T, dir string, size int64, opts ...SpoolOption) *Spool {
	t.Helper()
	s, err := CreateSpool(dir, size, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func spoolFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+spoolSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func adoptIDs(t *testing.T, dir string) (*Adopted, []string) {
	t.Helper()
	a, err := AdoptSpools(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range a.Writes {
		ids = append(ids, w.Record.RunID)
	}
	return a, ids
}

// TestSpoolKeptAtCloseIsAdoptedWhole, in both durability modes (issue
// 29): without fdatasync the entries are still in the page cache for the
// next process.
func TestSpoolKeptAtCloseIsAdoptedWhole(t *testing.T) {
	for _, d := range run.Durabilities() {
		t.Run(string(d), func(t *testing.T) { spoolKeptAtCloseIsAdoptedWhole(t, d) })
	}
}

func spoolKeptAtCloseIsAdoptedWhole(t *testing.T, d run.Durability) {
	dir := t.TempDir()
	s := newSpool(t, dir, 1<<16, WithSpoolDurability(d))
	if s.noSync == d.Syncs() {
		t.Errorf("durability %s: noSync = %v", d, s.noSync)
	}
	if err := s.Append([]Write{spoolWrite("a"), spoolWrite("b")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append([]Write{spoolWrite("c")}); err != nil {
		t.Fatal(err)
	}
	// While its process lives, nobody adopts it.
	if _, ids := adoptIDs(t, dir); len(ids) != 0 {
		t.Fatalf("a live spool was adopted: %v", ids)
	}
	if err := s.Close(true); err != nil {
		t.Fatal(err)
	}
	a, ids := adoptIDs(t, dir)
	if len(ids) != 3 || ids[0] != "a" || ids[2] != "c" {
		t.Fatalf("adopted %v, want a b c", ids)
	}
	w := a.Writes[0]
	if w.Kind != WriteFinish || w.Record.Outcome != run.OK || *w.Record.ExitCode != 0 ||
		!w.Record.EndedAt.Equal(spoolWrite("a").Record.EndedAt) {
		t.Errorf("adopted write = %+v, want spoolWrite(a)", w)
	}
	// Adopted, it is this process's: a second adopter gets nothing.
	if _, again := adoptIDs(t, dir); len(again) != 0 {
		t.Errorf("adopted twice: %v", again)
	}
	a.Done()
	if f := spoolFiles(t, dir); len(f) != 0 {
		t.Errorf("spools left after Done: %v", f)
	}
}

func TestSpoolResetForgetsEarlierEntries(t *testing.T) {
	dir := t.TempDir()
	s := newSpool(t, dir, 1<<16)
	if err := s.Append([]Write{spoolWrite("old-1"), spoolWrite("old-2"), spoolWrite("old-3")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	// The new entry overwrites only the start of the old ones.
	if err := s.Append([]Write{spoolWrite("new")}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close(true)
	a, ids := adoptIDs(t, dir)
	defer a.Done()
	if len(ids) != 1 || ids[0] != "new" {
		t.Errorf("adopted %v, want [new]", ids)
	}
}

func TestSpoolTornEntryEndsTheRead(t *testing.T) {
	dir := t.TempDir()
	s := newSpool(t, dir, 1<<16)
	if err := s.Append([]Write{spoolWrite("whole"), spoolWrite("torn")}); err != nil {
		t.Fatal(err)
	}
	end := s.used
	name := s.name
	_ = s.Close(true)
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{'#'}, end-2); err != nil { // inside the last payload
		t.Fatal(err)
	}
	_ = f.Close()
	a, ids := adoptIDs(t, dir)
	defer a.Done()
	if len(ids) != 1 || ids[0] != "whole" {
		t.Errorf("adopted %v, want [whole]", ids)
	}
}

func TestSpoolRefusesWhatItHasNoRoomFor(t *testing.T) {
	dir := t.TempDir()
	s := newSpool(t, dir, spoolHeaderLen+300)
	defer s.Close(false)
	if err := s.Append([]Write{spoolWrite("a"), spoolWrite("b")}); !errors.Is(err, errSpoolFull) {
		t.Fatalf("Append past the reserved space: %v, want errSpoolFull", err)
	}
	fi, err := os.Stat(s.name)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != spoolHeaderLen+300 {
		t.Errorf("spool size %d, want the reserved %d", fi.Size(), spoolHeaderLen+300)
	}
}

// TestHeldRecordsOutliveTheirWriter: the records a failing store holds are
// spooled before the runs go on; a writer that dies with them leaves them
// to the next, which writes each once and removes the spool.
func TestHeldRecordsOutliveTheirWriter(t *testing.T) {
	store, mend := brokenStore(t)
	spools := t.TempDir()
	s := newSpool(t, spools, 1<<20)
	j := NewWriter(WriterConfig{Store: store, StateDir: t.TempDir(), LogLimit: 1 << 20, RetryEvery: time.Hour, Spool: s})
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for i, id := range []string{"r1", "r2", "r3"} {
		if err := j.Admit(id); err != nil {
			t.Fatal(err)
		}
		start, end := runEvents(id, slot.Add(time.Duration(i)*time.Minute))
		j.Started(start)
		if err := j.finished(end); !errors.Is(err, ErrHeld) {
			t.Fatalf("Finished(%s) = %v, want ErrHeld", id, err)
		}
	}
	if err := j.Close(); err != nil {
		t.Errorf("Close with every held record spooled: %v, want nil", err)
	}
	mend()
	a, err := AdoptSpools(spools)
	if err != nil || len(a.Writes) == 0 {
		t.Fatalf("adopted %d writes (%v), want the held ones", len(a.Writes), err)
	}
	next := NewWriter(WriterConfig{Store: store, StateDir: t.TempDir(), LogLimit: 1 << 20, Adopted: a, Log: failOnError(t)})
	defer next.Close()
	testlog.Poll(10*time.Second, func() bool { return len(spoolFiles(t, spools)) == 0 }) // checked below
	if f := spoolFiles(t, spools); len(f) != 0 {
		t.Fatalf("adopted spool not removed once written: %v", f)
	}
	recs, err := store.Query(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	for _, r := range recs {
		if r.Outcome != run.OK || r.EndedAt.IsZero() {
			t.Errorf("run %s: %s, want ok with its end", r.RunID, r.Outcome)
		}
	}
}

// TestRecoveredWriterEmptiesItsSpool: once the held records are in the
// store, the spool forgets them, and a clean Close removes it.
func TestRecoveredWriterEmptiesItsSpool(t *testing.T) {
	store, mend := brokenStore(t)
	spools := t.TempDir()
	s := newSpool(t, spools, 1<<20)
	j := NewWriter(WriterConfig{Store: store, StateDir: t.TempDir(), LogLimit: 1 << 20, RetryEvery: 10 * time.Millisecond, Spool: s})
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	if err := j.Admit("r1"); err != nil {
		t.Fatal(err)
	}
	start, end := runEvents("r1", slot)
	j.Started(start)
	_ = j.finished(end)
	j.qmu.Lock()
	used := s.used
	j.qmu.Unlock()
	if used == spoolHeaderLen {
		t.Fatal("nothing spooled while the store failed")
	}
	mend()
	testlog.Poll(10*time.Second, func() bool { return !j.Health().Degraded }) // the check below says what it found
	j.qmu.Lock()
	used = s.used
	j.qmu.Unlock()
	if used != spoolHeaderLen {
		t.Errorf("spool holds %d bytes after recovery, want none", used-spoolHeaderLen)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if f := spoolFiles(t, spools); len(f) != 0 {
		t.Errorf("spool left after a clean Close: %v", f)
	}
}
