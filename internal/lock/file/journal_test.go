package file

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock"
)

// journalLocker is a locker on dir/locks whose slot cursors go to a
// journal in dir/cursors.
func journalLocker(dir string) *Locker {
	return NewLocker(filepath.Join(dir, "locks"), locktest.InRun, WithCursorJournal(filepath.Join(dir, "cursors")))
}

// journals lists the journal files in dir/cursors.
func journals(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "cursors", "*"+journalSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestCursorJournalGroupsSyncs: fires landing while the journal syncs
// share its next sync, and each one's record is in the journal, whole,
// by the time it is told it is durable.
func TestCursorJournalGroupsSyncs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := newCursorJournal(dir)
	var syncs atomic.Int32
	j.sync = func(f *os.File) error {
		syncs.Add(1)
		time.Sleep(2 * time.Millisecond) // a disk's flush: the next fires queue meanwhile
		return syncData(f)
	}
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := "lock" + string(rune('a'+i%26))
			h := lock.Record{Holder: run.Holder{Job: name, RunID: "run-" + string(rune('A'+i%26)), Since: time.Unix(int64(i), 0)}}
			rec, err := encodeRecord(h)
			if err != nil {
				t.Error(err)
				return
			}
			if err := <-j.Append(name, rec); err != nil {
				t.Errorf("append %d: %v", i, err)
				return
			}
			data, err := os.ReadFile(j.path)
			if err != nil || !strings.Contains(string(data), `"run_id":"`+h.RunID+`"`) {
				t.Errorf("append %d told durable, journal reads %v", i, err)
			}
		})
	}
	wg.Wait()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	got := int(syncs.Load())
	t.Logf("%d records, %d syncs", n, got)
	if got >= n/2 {
		t.Errorf("%d syncs for %d records landing together; want them grouped", got, n)
	}
	if err := <-j.Append("late", encoded(t, lock.Record{})); !errors.Is(err, errJournalClosed) {
		t.Errorf("append after Close: %v, want %v", err, errJournalClosed)
	}
}

// TestReplayAfterMachineCrash plays a machine crash: the lock file lost
// its last record (the page cache), the journal kept it. The next locker
// puts it back, with the cursor, before any slot check: the slot is not
// run again, and the run in flight is still named for its recovery.
func TestReplayAfterMachineCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := journalLocker(dir)
	acquire(t, first, "x", "a", "run-1", locktest.SlotAt(10), true).Lease.Release()
	path := filepath.Join(dir, "locks", "x.lock")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g := acquire(t, first, "x", "a", "run-2", locktest.SlotAt(11), true)
	if err := g.Lease.SetPID(4242); err != nil {
		t.Fatal(err)
	}
	if err := <-g.Lease.(*fileLease).synced; err != nil {
		t.Fatal(err)
	}
	// The crash: the process is gone (its descriptors and journal flock
	// with it), the lock file reads what it did before run-2.
	g.Lease.(*fileLease).rec.Close()
	g.Lease.(*fileLease).f.Close()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, before, 0o600); err != nil {
		t.Fatal(err)
	}
	// A line torn by the crash is passed over.
	if f, err := os.OpenFile(journals(t, dir)[0], os.O_APPEND|os.O_WRONLY, 0); err != nil {
		t.Fatal(err)
	} else {
		f.WriteString(`0badf00d x {"pid":1,"run_id":"run-9"`)
		f.Close()
	}

	next := journalLocker(dir)
	n, err := next.Replay()
	if err != nil || n != 1 {
		t.Fatalf("Replay: %d rewritten, %v; want 1", n, err)
	}
	if left := journals(t, dir); len(left) != 0 {
		t.Errorf("journals left after replay: %v", left)
	}
	st, err := next.Inspect(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if st.Record.RunID != "run-2" || !st.Record.InFlight || st.Record.PID != 4242 {
		t.Errorf("record after replay: %+v; want run-2, in flight, pid 4242", st.Record)
	}
	_, err = next.Acquire(context.Background(), lock.Request{
		Name: "x", Record: lock.Record{Holder: run.Holder{Job: "a", RunID: "run-3"}, Slot: locktest.SlotAt(11)}, CheckSlot: true,
	})
	if !errors.Is(err, lock.ErrSlotDone) {
		t.Fatalf("slot 11 after replay: %v, want %v", err, lock.ErrSlotDone)
	}
	if n, err := next.Replay(); err != nil || n != 0 {
		t.Errorf("second Replay: %d, %v; want nothing to do", n, err)
	}
}

// TestReplayLeavesLiveJournals: a journal flocked by a live process is
// its own, however old; Replay neither reads nor removes it.
func TestReplayLeavesLiveJournals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	live := journalLocker(dir)
	g := acquire(t, live, "x", "a", "run-1", locktest.SlotAt(10), true)
	if err := g.Lease.SetPID(4242); err != nil {
		t.Fatal(err)
	}
	if err := g.Lease.Release(); err != nil {
		t.Fatal(err)
	}
	other := journalLocker(dir)
	if n, err := other.Replay(); err != nil || n != 0 {
		t.Fatalf("Replay beside a live journal: %d, %v", n, err)
	}
	if left := journals(t, dir); len(left) != 1 {
		t.Errorf("journals after a replay beside a live one: %v; want it kept", left)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCursorJournalCompacts: a journal past its size is rewritten with
// each lock's newest record, which a replay then reads.
func TestCursorJournalCompacts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := journalLocker(dir)
	l.journal.minCapacity = 4 << 10
	const fires = 300
	for i := range fires {
		name := []string{"x", "y", "z"}[i%3]
		g := acquire(t, l, name, "a", "run-"+time.Duration(i).String(), locktest.SlotAt(i+1), true)
		if err := g.Lease.SetPID(100 + i); err != nil {
			t.Fatal(err)
		}
		if err := g.Lease.Release(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	js := journals(t, dir)
	if len(js) != 1 {
		t.Fatalf("journals: %v; want one", js)
	}
	fi, err := os.Stat(js[0])
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 2*l.journal.minCapacity {
		t.Errorf("journal of %d fires on 3 locks is %d bytes; want it compacted below %d", fires, fi.Size(), 2*l.journal.minCapacity)
	}
	// The lock files lose their records; the journal alone restores them.
	for _, name := range []string{"x", "y", "z"} {
		if err := os.Truncate(filepath.Join(dir, "locks", name+".lock"), 0); err != nil {
			t.Fatal(err)
		}
	}
	next := journalLocker(dir)
	if n, err := next.Replay(); err != nil || n != 3 {
		t.Fatalf("Replay: %d, %v; want 3 locks rewritten", n, err)
	}
	for k, name := range []string{"x", "y", "z"} {
		last := fires - 3 + k // the last fire on name
		_, err := next.Acquire(context.Background(), lock.Request{
			Name: name, Record: lock.Record{Holder: run.Holder{Job: "a", RunID: "again"}, Slot: locktest.SlotAt(last + 1)}, CheckSlot: true,
		})
		if !errors.Is(err, lock.ErrSlotDone) {
			t.Errorf("lock %s, slot %d after replay: %v; want %v", name, last+1, err, lock.ErrSlotDone)
		}
	}
}

// TestReplayAfterSupervisorKill: a real supervisor process, killed with
// its run alive. The lock file is as new as the journal (the page cache
// outlived the process): the replay rewrites nothing, syncs the file
// though the run still holds the lock, and removes the journal; the slot
// stays done.
func TestReplayAfterSupervisorKill(t *testing.T) {
	t.Parallel()
	ctx := locktest.Context(t, 20*time.Second)
	dir := t.TempDir()
	survivor, helper := startHelper(ctx, t, "journal", dir)
	if err := syscall.Kill(-helper.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	if len(journals(t, dir)) != 1 {
		t.Fatalf("journals of the killed supervisor: %v; want one", journals(t, dir))
	}
	next := journalLocker(dir)
	if n, err := next.Replay(); err != nil || n != 0 {
		t.Fatalf("Replay with the run alive: %d, %v; want nothing rewritten", n, err)
	}
	if left := journals(t, dir); len(left) != 0 {
		t.Errorf("journals left: %v", left)
	}
	locktest.KillAndReap(survivor)
	_, err := next.Acquire(ctx, lock.Request{
		Name: "survivor", Record: lock.Record{Holder: run.Holder{Job: "j", RunID: "run-2"}, Slot: locktest.SlotAt(1)}, CheckSlot: true,
	})
	if !errors.Is(err, lock.ErrSlotDone) {
		t.Fatalf("the killed supervisor's slot: %v; want %v", err, lock.ErrSlotDone)
	}
}

// TestReleaseWaitsForTheJournal: the lock is let go only once its
// cursor is durable, as with the lock file's own sync.
func TestReleaseWaitsForTheJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := journalLocker(dir)
	gate := make(chan struct{})
	l.journal.sync = func(f *os.File) error { <-gate; return syncData(f) }
	g := acquire(t, l, "x", "a", "run-1", locktest.SlotAt(1), true)
	if err := g.Lease.SetPID(4242); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() { released <- g.Lease.Release() }()
	select {
	case err := <-released:
		t.Fatalf("Release returned (%v) before the journal's sync", err)
	case <-time.After(50 * time.Millisecond):
	}
	if ok, err := tryFlockPath(filepath.Join(dir, "locks", "x.lock")); err != nil || ok {
		t.Fatalf("lock free (%v, %v) before its cursor is durable", ok, err)
	}
	close(gate)
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// tryFlockPath takes and drops an exclusive flock on path, if free.
func tryFlockPath(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return tryFlock(f, unix.LOCK_EX)
}

// encoded is h as a lock file holds it.
func encoded(t testing.TB, h lock.Record) []byte {
	t.Helper()
	data, err := encodeRecord(h)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// BenchmarkDurableCursors: fires of many jobs at once, each taking its
// lock with a new slot cursor, starting (SetPID) and letting go, the
// cursor made durable by each lock file's own fdatasync or by the
// journal's group sync. ns/op is per fire; the syncs a fire are reported.
func BenchmarkDurableCursors(b *testing.B) {
	for _, tc := range []struct {
		name    string
		journal bool
	}{{"own-fdatasync", false}, {"journal", true}} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			l := NewLocker(filepath.Join(dir, "locks"), locktest.InRun)
			var syncs atomic.Int64
			if tc.journal {
				l = journalLocker(dir)
				l.journal.sync = func(f *os.File) error { syncs.Add(1); return syncData(f) }
			}
			var next atomic.Int64
			b.SetParallelism(8) // 16 fires in flight on 2 processors
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				name := "job" + strconv.FormatInt(next.Add(1), 10)
				for slot := 1; pb.Next(); slot++ {
					g, err := l.Acquire(context.Background(), lock.Request{Name: name, CheckSlot: true,
						Record: lock.Record{Holder: run.Holder{Job: name, RunID: name + "-" + strconv.Itoa(slot)}, Slot: locktest.SlotAt(slot)}})
					if err != nil {
						b.Error(err)
						return
					}
					if err := g.Lease.SetPID(os.Getpid()); err != nil {
						b.Error(err)
					}
					if err := g.Lease.Release(); err != nil {
						b.Error(err)
					}
				}
			})
			b.StopTimer()
			if tc.journal {
				b.ReportMetric(float64(syncs.Load())/float64(b.N), "syncs/fire")
			} else {
				b.ReportMetric(1, "syncs/fire")
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestNewestLines: a rewrite keeps each lock's last line, the later
// chunk's over the earlier's, and drops what is not a whole line.
func TestNewestLines(t *testing.T) {
	t.Parallel()
	line := func(name, runID string) []byte {
		return journalLine(name, encoded(t, lock.Record{Holder: run.Holder{RunID: runID}}))
	}
	written := slices.Concat(line("x", "1"), line("y", "2"), line("x", "3"))
	batch := slices.Concat(line("y", "4"), []byte("0badf00d z {torn"))
	got := newestLines(written, batch)
	if want := slices.Concat(line("x", "3"), line("y", "4")); !bytes.Equal(got, want) {
		t.Errorf("newestLines:\n%s\nwant\n%s", got, want)
	}
}

// TestCursorJournalBacksOff: a journal that cannot be made (here a file
// stands where its directory goes, as a state dir read-only but for
// locks/ refuses it) is tried once, logged, and left alone for
// retryAfter: the fires meanwhile sync their own lock files, and each
// slot stays done. Once the directory can be made, the next try after
// the pause brings the journal back, logged once.
func TestCursorJournalBacksOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "cursors")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l := journalLocker(dir)
	var logged testlog.Buffer
	l.LogTo(logged.Logger())
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC).UnixNano())
	l.journal.now = func() time.Time { return time.Unix(0, now.Load()) }
	fire := func(i int) {
		t.Helper()
		g := acquire(t, l, "j", "a", "run-"+strconv.Itoa(i), locktest.SlotAt(i), true)
		if err := g.Lease.SetPID(100 + i); err != nil {
			t.Fatal(err)
		}
		if err := g.Lease.Release(); err != nil {
			t.Fatalf("fire %d: Release: %v", i, err)
		}
		_, err := l.Acquire(context.Background(), lock.Request{Name: "j",
			Record: lock.Record{Holder: run.Holder{Job: "a", RunID: "again"}, Slot: locktest.SlotAt(i)}, CheckSlot: true})
		if !errors.Is(err, lock.ErrSlotDone) {
			t.Fatalf("fire %d: its slot again: %v; want %v", i, err, lock.ErrSlotDone)
		}
	}
	const warning, recovered = "cursor journal cannot be written", "cursor journal written again"
	for i := 1; i <= 5; i++ {
		fire(i)
	}
	if n := strings.Count(logged.String(), warning); n != 1 {
		t.Fatalf("5 fires within the pause logged %d warnings; want 1 (one try):\n%s", n, logged.String())
	}
	now.Add(int64(retryAfter + time.Second))
	fire(6)
	if n := strings.Count(logged.String(), warning); n != 2 {
		t.Fatalf("a fire after the pause logged %d warnings in all; want 2 (a second try):\n%s", n, logged.String())
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	fire(7) // still within the second pause: not tried
	if js := journals(t, dir); len(js) != 0 || strings.Count(logged.String(), recovered) != 0 {
		t.Fatalf("journal tried within the pause: %v\n%s", js, logged.String())
	}
	now.Add(int64(retryAfter + time.Second))
	fire(8)
	fire(9)
	if js := journals(t, dir); len(js) != 1 {
		t.Fatalf("journals after the pause: %v; want one", js)
	}
	if n, w := strings.Count(logged.String(), recovered), strings.Count(logged.String(), warning); n != 1 || w != 2 {
		t.Fatalf("logged %d recoveries and %d warnings; want 1 and 2:\n%s", n, w, logged.String())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCursorJournalQueuedLinesWaitOutThePause: the lines queued while a
// failing try of the journal ran are answered with its failure, not tried
// again at once: one try, one warning.
func TestCursorJournalQueuedLinesWaitOutThePause(t *testing.T) {
	t.Parallel()
	j := newCursorJournal(t.TempDir())
	var logged testlog.Buffer
	j.log = logged.Logger()
	var tries atomic.Int32
	release := make(chan struct{})
	j.sync = func(*os.File) error {
		tries.Add(1)
		<-release
		return syscall.EIO
	}
	rec := encoded(t, lock.Record{Holder: run.Holder{Job: "a", RunID: "r"}})
	first := j.Append("a", rec)
	testlog.Eventually(t, 5*time.Second, "the first try under way", func() bool { return tries.Load() == 1 })
	var queued []<-chan error
	for i := range 10 {
		queued = append(queued, j.Append("l"+strconv.Itoa(i), rec))
	}
	close(release)
	if err := <-first; !errors.Is(err, syscall.EIO) {
		t.Fatalf("the failing try: %v; want %v", err, syscall.EIO)
	}
	for i, c := range queued {
		if err := <-c; !errors.Is(err, syscall.EIO) {
			t.Errorf("line %d queued during the try: %v; want its failure", i, err)
		}
	}
	if n := tries.Load(); n != 1 {
		t.Errorf("%d tries; want 1", n)
	}
	if n := strings.Count(logged.String(), "cursor journal cannot be written"); n != 1 {
		t.Errorf("%d warnings; want 1:\n%s", n, logged.String())
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}
