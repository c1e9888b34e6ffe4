package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"cronvisor/internal/base/run"
)

// restoreCalls records what WithRestored was told.
type restoreCalls struct {
	mu    sync.Mutex
	kept  []string
	errs  []error
	calls int
}

func (c *restoreCalls) option() StoreOption {
	return WithRestored(func(_, kept string, err error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.calls++
		c.kept, c.errs = append(c.kept, kept), append(c.errs, err)
	})
}

// atPath is the run ids of the database now at p, newest first.
func atPath(t *testing.T, p string) []string {
	t.Helper()
	ro, err := OpenReadOnly(p)
	if err != nil {
		t.Fatalf("OpenReadOnly(%s): %v", p, err)
	}
	defer ro.Close()
	recs, err := ro.Query(testCtx(t), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return runIDs(recs)
}

// TestDeletedFileIsCopiedBack: the database a store has open, deleted
// with its WAL (the file alone, or the whole state dir), is copied back
// to its path at the next write, and the write follows it there.
func TestDeletedFileIsCopiedBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		rm   func(p string) error
	}{
		{"the file alone", func(p string) error {
			return errors.Join(os.Remove(p), os.Remove(p+"-wal"), os.Remove(p+"-shm"))
		}},
		{"the whole state dir", func(p string) error { return os.RemoveAll(filepath.Dir(p)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var told restoreCalls
			s, p := openTemp(t, told.option())
			for i := range 3 { // small commits stay in the WAL: the copy must read it
				mustRun(t, s, run.Record{Job: "a", RunID: fmt.Sprint("before", i), Outcome: run.OK, ScheduledAt: minute(i)})
			}
			if err := tc.rm(p); err != nil {
				t.Fatal(err)
			}
			mustRun(t, s, run.Record{Job: "a", RunID: "after", Outcome: run.OK, ScheduledAt: minute(9)})
			if got, want := atPath(t, p), []string{"after", "before2", "before1", "before0"}; !slices.Equal(got, want) {
				t.Errorf("database at the path holds %v, want %v", got, want)
			}
			if told.calls != 1 || told.errs[0] != nil || told.kept[0] != "" {
				t.Errorf("WithRestored told %d times: kept %q, errs %v; want once, nil", told.calls, told.kept, told.errs)
			}
			modes := map[string]os.FileMode{p: 0o600}
			if tc.name == "the whole state dir" {
				modes[filepath.Dir(p)] = 0o700 | os.ModeDir
			}
			for path, want := range modes {
				if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
					t.Errorf("%s: %v %v, want mode %v", path, fi.Mode(), err, want)
				}
			}
			if left, _ := filepath.Glob(p + ".restore-*"); len(left) != 0 {
				t.Errorf("copies left behind: %v", left)
			}
		})
	}
}

// TestDeletedFileLosesNoConcurrentWrite: writers commit without pause
// while the state dir is deleted under them, three times; every write
// that returned nil is in the database at the path at the end.
func TestDeletedFileLosesNoConcurrentWrite(t *testing.T) {
	for try := range 20 {
		s, p := openTemp(t, WithDurability(run.DurabilityProcess)) // no fsync: the race, not the disk
		ctx, cancel := context.WithCancel(testCtx(t))
		var mu sync.Mutex
		var acked []string
		tick := make(chan struct{}, 1) // an ack came
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ctx.Err() == nil; i++ {
					id := fmt.Sprintf("w%d-%d", w, i)
					err := s.Finish(context.Background(), run.Record{Job: "a", RunID: id, Outcome: run.OK, ScheduledAt: minute(i)})
					if err == nil {
						mu.Lock()
						acked = append(acked, id)
						mu.Unlock()
						select {
						case tick <- struct{}{}:
						default:
						}
					}
				}
			}()
		}
		for range 3 {
			waitAcked(t, tick, &mu, &acked, 20)
			removeUnder(t, filepath.Dir(p))
		}
		waitAcked(t, tick, &mu, &acked, 20)
		cancel()
		wg.Wait()
		// A write after the last deletion may not have come; one more
		// copies it back if so.
		mustRun(t, s, run.Record{Job: "a", RunID: "last", Outcome: run.OK, ScheduledAt: minute(0)})
		got := atPath(t, p)
		slices.Sort(got)
		for _, id := range acked {
			if _, ok := slices.BinarySearch(got, id); !ok {
				t.Fatalf("try %d: write %s returned nil but is not in the database at the path (%d acked, %d there)", try, id, len(acked), len(got))
			}
		}
		s.Close()
	}
}

// removeUnder removes dir while writers may make it again: a removal
// that meets a file made meanwhile (ENOTEMPTY, as `rm -rf` would) is
// tried again.
func removeUnder(t *testing.T, dir string) {
	t.Helper()
	var err error
	for range 100 {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
	}
	t.Fatalf("remove %s: %v", dir, err)
}

// waitAcked waits until n more writes have been acknowledged.
func waitAcked(t *testing.T, tick <-chan struct{}, mu *sync.Mutex, acked *[]string, n int) {
	t.Helper()
	mu.Lock()
	want := len(*acked) + n
	mu.Unlock()
	ctx := testCtx(t)
	for {
		mu.Lock()
		got := len(*acked)
		mu.Unlock()
		if got >= want {
			return
		}
		select {
		case <-tick:
		case <-ctx.Done():
			t.Fatalf("writes stalled at %d of %d", got, want)
		}
	}
}

// TestDeletedFileWithAnotherAtThePath: when another database was put at
// the path before the store noticed the deletion, the store writes to that
// one and keeps the deleted one's copy beside it, told as ErrPathTaken.
func TestDeletedFileWithAnotherAtThePath(t *testing.T) {
	var told restoreCalls
	s, p := openTemp(t, told.option())
	mustRun(t, s, run.Record{Job: "a", RunID: "mine", Outcome: run.OK, ScheduledAt: minute(0)})
	if err := os.RemoveAll(filepath.Dir(p)); err != nil {
		t.Fatal(err)
	}
	other, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, other, run.Record{Job: "a", RunID: "theirs", Outcome: run.OK, ScheduledAt: minute(1)})
	other.Close()
	mustRun(t, s, run.Record{Job: "a", RunID: "after", Outcome: run.OK, ScheduledAt: minute(2)})
	if got, want := atPath(t, p), []string{"after", "theirs"}; !slices.Equal(got, want) {
		t.Errorf("database at the path holds %v, want %v", got, want)
	}
	if told.calls != 1 || !errors.Is(told.errs[0], ErrPathTaken) || told.kept[0] == "" {
		t.Fatalf("WithRestored told %d times: kept %q, errs %v; want once, ErrPathTaken", told.calls, told.kept, told.errs)
	}
	if got, want := atPath(t, told.kept[0]), []string{"mine"}; !slices.Equal(got, want) {
		t.Errorf("kept copy %s holds %v, want %v", told.kept[0], got, want)
	}
}

// TestDeletedFileNotCopiableIsKeptOpen: while the directory cannot be made
// again, writes fail and the deleted file stays open; once it can, the
// next write copies it back with every record.
func TestDeletedFileNotCopiableIsKeptOpen(t *testing.T) {
	var told restoreCalls
	s, p := openTemp(t, told.option())
	mustRun(t, s, run.Record{Job: "a", RunID: "before", Outcome: run.OK, ScheduledAt: minute(0)})
	dir := filepath.Dir(p)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil { // a file where the dir was
		t.Fatal(err)
	}
	for i := range 3 { // the Writer's retries: told once
		if err := s.Finish(context.Background(), run.Record{Job: "a", RunID: fmt.Sprint("refused", i), Outcome: run.OK, ScheduledAt: minute(1)}); err == nil {
			t.Fatal("a write with no directory to copy into succeeded")
		}
	}
	if told.calls != 1 || told.errs[0] == nil {
		t.Fatalf("WithRestored told %d times, errs %v; want once, an error", told.calls, told.errs)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, run.Record{Job: "a", RunID: "after", Outcome: run.OK, ScheduledAt: minute(2)})
	if got, want := atPath(t, p), []string{"after", "before"}; !slices.Equal(got, want) {
		t.Errorf("database at the path holds %v, want %v", got, want)
	}
	if told.calls != 2 || told.errs[1] != nil {
		t.Errorf("WithRestored told %d times, errs %v; want the copy made told too", told.calls, told.errs)
	}
}
