package semaphore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
)

// holder is a run of job on host-JOB that began at since.
func holder(job string, since time.Time) run.Holder {
	return run.Holder{Job: job, RunID: "run-" + job, Host: "host-" + job, Since: since}
}

// req asks for uses ("db", 1, "disk", 2 ...) as job.
func req(job string, uses ...any) Request {
	r := Request{Holder: holder(job, time.Now())}
	for i := 0; i < len(uses); i += 2 {
		r.Uses = append(r.Uses, Use{Resource: uses[i].(string), Weight: uses[i+1].(int)})
	}
	return r
}

func mustTake(ctx context.Context, t *testing.T, s Semaphores, r Request) *Held {
	t.Helper()
	h, err := s.Take(ctx, r)
	if err != nil {
		t.Fatalf("Take for %s: %v", r.Holder.Job, err)
	}
	t.Cleanup(func() { _ = s.Release(h) })
	return h
}

// mustBeFull checks that err is a *FullError of res naming jobs.
func mustBeFull(t *testing.T, err error, res string, jobs ...string) *FullError {
	t.Helper()
	var full *FullError
	if !errors.As(err, &full) || !errors.Is(err, ErrFull) {
		t.Fatalf("got %v, want a *FullError of %s", err, res)
	}
	var got []string
	for _, h := range full.Holders {
		got = append(got, h.Job)
	}
	if full.Resource != res || !slices.Equal(got, jobs) {
		t.Fatalf("full %s held by %v, want %s held by %v", full.Resource, got, res, jobs)
	}
	return full
}

// listed is List's entry of res.
func listed(ctx context.Context, t *testing.T, s Semaphores, res string) Resource {
	t.Helper()
	rs, err := s.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, r := range rs {
		if r.Name == res {
			return r
		}
	}
	t.Fatalf("List has no %s: %v", res, rs)
	return Resource{}
}

// heldSlots is List's held slots of res, as "db/0=job".
func heldSlots(ctx context.Context, t *testing.T, s Semaphores, res string) []string {
	t.Helper()
	var out []string
	for _, st := range listed(ctx, t, s, res).Slots {
		if st.Held {
			out = append(out, st.Name+"="+st.Record.Job)
		}
	}
	return out
}

// A size-2 resource: two takers (of two supervisors) get a slot each,
// the third is refused naming both holders.
func TestThirdTakerIsRefusedNamingTheHolders(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(map[string]int) Semaphores) {
		ctx := locktest.Context(t, 20*time.Second)
		a, b := open(map[string]int{"db": 2}), open(map[string]int{"db": 2})
		since := time.Date(2025, 3, 30, 10, 2, 3, 0, time.Local)
		h1 := mustTake(ctx, t, a, Request{Holder: holder("export_a", since), Uses: []Use{{"db", 1}}})
		h2 := mustTake(ctx, t, b, req("export_b", "db", 1))
		if !slices.Equal(h1.Slots, []string{"db/0"}) || !slices.Equal(h2.Slots, []string{"db/1"}) || len(h1.Grants) != 1 {
			t.Fatalf("slots %v and %v, want db/0 and db/1", h1.Slots, h2.Slots)
		}
		for _, s := range []Semaphores{a, b} {
			_, err := s.Take(ctx, req("export_c", "db", 1))
			full := mustBeFull(t, err, "db", "export_a", "export_b")
			if want := "resource db full: held by export_a on host-export_a since 10:02:03, export_b on host-export_b"; !strings.HasPrefix(full.Error(), want) {
				t.Errorf("reason %q, want it to start %q", full.Error(), want)
			}
		}
		if got := heldSlots(ctx, t, b, "db"); !slices.Equal(got, []string{"db/0=export_a", "db/1=export_b"}) {
			t.Errorf("List shows %v held", got)
		}
	})
}

// Weight 2 takes both slots; a weight-2 fire that finds one held takes
// none, leaving the free slot free; a release frees its slots, twice
// is a no-op.
func TestWeightAndRelease(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(map[string]int) Semaphores) {
		ctx := locktest.Context(t, 20*time.Second)
		a, b := open(map[string]int{"db": 2, "disk": 1}), open(map[string]int{"db": 2, "disk": 1})
		big, err := a.Take(ctx, req("big", "db", 2, "disk", 1))
		if err != nil || !slices.Equal(big.Slots, []string{"db/0", "db/1", "disk/0"}) {
			t.Fatalf("weight 2: %v, %v", big, err)
		}
		_, err = b.Take(ctx, req("small", "db", 1))
		mustBeFull(t, err, "db", "big", "big")
		for range 2 {
			if err := a.Release(big); err != nil {
				t.Fatalf("Release: %v", err)
			}
		}
		one := mustTake(ctx, t, b, req("one", "db", 1))
		_, err = a.Take(ctx, req("heavy", "db", 2, "disk", 1))
		mustBeFull(t, err, "db", "one")
		if got := heldSlots(ctx, t, a, "db"); !slices.Equal(got, []string{"db/0=one"}) {
			t.Errorf("after a refused weight 2, held %v, want only db/0=one", got)
		}
		if got := heldSlots(ctx, t, a, "disk"); len(got) != 0 {
			t.Errorf("disk held %v after a refused take", got)
		}
		if err := b.Release(one); err != nil {
			t.Fatal(err)
		}
		h := mustTake(ctx, t, a, req("heavy", "db", 2))
		if len(h.Slots) != 2 {
			t.Errorf("after the release, weight 2 took %v", h.Slots)
		}
	})
}

// Declared resources only, weights within their size.
func TestTakeRefusesWhatIsNotDeclared(t *testing.T) {
	s := newSems(nil, map[string]int{"db": 2})
	for _, r := range []Request{req("x", "dbx", 1), req("x", "db", 3), req("x", "db", 0), req("x", "db", 1, "db", 2)} {
		if h, err := s.Take(context.Background(), r); err == nil || errors.Is(err, ErrFull) {
			t.Errorf("Take(%v) = %v, %v; want a request error", r.Uses, h, err)
		}
	}
}
