package owner

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
)

var t0 = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

func job(name string) *config.Job {
	s, err := schedule.Parse("@every 10s", time.UTC)
	if err != nil {
		panic(err)
	}
	return &config.Job{Name: name, Schedule: "@every 10s", Sched: s, Lock: name, Enabled: true}
}

// member is host up, last beating at beat, running jobs.
func member(host string, beat time.Time, jobs ...*config.Job) Member {
	m := Member{Host: host, Incarnation: host + "/1", Up: true, LastBeat: beat, Jobs: map[uint64]bool{}}
	for _, j := range jobs {
		m.Jobs[Digest(j)] = true
	}
	return m
}

// ranked is the hosts' names by their weight for job, highest first.
func ranked(job string, hosts ...string) []string {
	v := View{}
	j := &config.Job{Name: job}
	for _, h := range hosts {
		v.Members = append(v.Members, Member{Host: h, Up: true, Jobs: map[uint64]bool{Digest(j): true}})
	}
	var out []string
	for len(v.Members) > 0 {
		m, _ := top(&v, job, Digest(j), "")
		out = append(out, m.Host)
		for i := range v.Members {
			if v.Members[i].Host == m.Host {
				v.Members = append(v.Members[:i], v.Members[i+1:]...)
				break
			}
		}
	}
	return out
}

func TestRendezvousSpreadsJobsAndMovesFewWhenAHostLeaves(t *testing.T) {
	hosts := make([]string, 20)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("host-%d", i+1)
	}
	owned := map[string]int{}
	moved := 0
	for i := range 1000 {
		name := fmt.Sprintf("job-%d", i)
		r := ranked(name, hosts...)
		owned[r[0]]++
		without := ranked(name, hosts[1:]...) // host-1 leaves
		if r[0] != "host-1" && without[0] != r[0] {
			moved++
		}
		if r[0] == "host-1" && without[0] != r[1] {
			t.Fatalf("%s: host-1's job went to %s, want the next in rank %s", name, without[0], r[1])
		}
	}
	for _, h := range hosts {
		if n := owned[h]; n < 25 || n > 80 {
			t.Errorf("%s owns %d of 1000 jobs, want about 50", h, n)
		}
	}
	if moved != 0 {
		t.Errorf("%d jobs of other hosts moved when host-1 left, want 0", moved)
	}
}

func TestJudge(t *testing.T) {
	j := job("backup")
	owner, me, other := "", "me", "other"
	r := ranked("backup", "a", "b", "c")
	owner = r[0]
	me, other = r[1], r[2]
	at := t0
	w := &waiter{job: j.Name, digest: Digest(j), at: at, ownerFire: at, owner: member(owner, at.Add(-time.Second), j)}
	restarted := member(owner, at.Add(3*time.Second), j)
	restarted.Incarnation = owner + "/2"
	lost := member(owner, at.Add(-time.Second), j)
	lost.Up = false
	for _, tc := range []struct {
		name          string
		view          []Member
		me            string
		decided, fire bool
	}{
		{"the owner beat after its fire: it fired", []Member{member(owner, at.Add(time.Second), j), member(me, at, j)}, me, true, false},
		{"the owner up, not beaten since: not yet", []Member{member(owner, at.Add(Margin/2), j), member(me, at, j)}, me, false, false},
		{"the owner lost: the next fires", []Member{lost, member(me, at, j), member(other, at, j)}, me, true, true},
		{"the owner lost: a third host leaves it", []Member{lost, member(me, at, j), member(other, at, j)}, other, true, false},
		{"the owner gone from the view", []Member{member(me, at, j)}, me, true, true},
		{"the owner restarted after its fire instant", []Member{restarted, member(me, at, j)}, me, true, true},
		{"no other host runs the job: this one fires", []Member{lost, member(me, at)}, me, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, f := judge(tc.me, w, &View{Read: at.Add(4 * time.Second), Members: tc.view})
			if d != tc.decided || f != tc.fire {
				t.Errorf("judge = decided %v, fire %v; want %v, %v", d, f, tc.decided, tc.fire)
			}
		})
	}
}

func TestDigestTellsJobsThatFireOtherSlots(t *testing.T) {
	a, b := job("x"), job("x")
	if Digest(a) != Digest(b) {
		t.Fatal("equal jobs, different digests")
	}
	b.Schedule = "@every 20s"
	c := job("x")
	c.Enabled = false
	d := job("x")
	d.Overlap = config.OverlapAllow
	for _, o := range []*config.Job{b, c, d} {
		if Digest(o) == Digest(a) {
			t.Errorf("%+v has the digest of %+v", o, a)
		}
	}
}

// result is what Slot said.
type result struct {
	fire bool
	done func()
}

// slot calls g.Slot in a goroutine of the bubble.
func slot(ctx context.Context, g *Gate, j *config.Job) chan result {
	ch := make(chan result, 1)
	go func() {
		f, d := g.Slot(ctx, j)
		ch <- result{f, d}
	}()
	return ch
}

func TestGate(t *testing.T) {
	j := job("backup")
	r := ranked("backup", "a", "b", "c")
	owner, next, third := r[0], r[1], r[2]
	view := func(c *clock.Fake, ms ...Member) View { return View{Read: c.Now(), Members: ms} }
	lost := func(m Member) Member { m.Up = false; return m }
	t.Run("the owner fires at once, the others leave it when it beats", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := clock.NewFake(t0)
			gs := map[string]*Gate{}
			var res = map[string]chan result{}
			for _, h := range r {
				gs[h] = New(h, c, 3*time.Second, time.Second)
				gs[h].Update(view(c, member(owner, t0, j), member(next, t0, j), member(third, t0, j)))
				res[h] = slot(t.Context(), gs[h], j)
			}
			synctest.Wait()
			if got := <-res[owner]; !got.fire {
				t.Fatal("the owner did not fire")
			}
			c.Advance(time.Second)
			for _, h := range []string{next, third} {
				gs[h].Update(view(c, member(owner, c.Now(), j), member(next, c.Now(), j), member(third, c.Now(), j)))
			}
			synctest.Wait()
			for _, h := range []string{next, third} {
				if got := <-res[h]; got.fire {
					t.Errorf("%s fired the owner's slot", h)
				}
				if gs[h].Left() != 1 {
					t.Errorf("%s left %d slots, want 1", h, gs[h].Left())
				}
			}
		})
	})
	t.Run("the owner dies: the next host fires the slot late, in order", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := clock.NewFake(t0)
			g := New(next, c, 3*time.Second, time.Second)
			g.Update(view(c, member(owner, t0, j), member(next, t0, j)))
			first := slot(t.Context(), g, j)
			synctest.Wait()
			c.Advance(time.Second)
			second := slot(t.Context(), g, j)
			synctest.Wait()
			c.Advance(3 * time.Second)
			g.Update(view(c, lost(member(owner, t0, j)), member(next, c.Now(), j)))
			synctest.Wait()
			a := <-first
			if !a.fire {
				t.Fatal("the first slot was not fired")
			}
			select {
			case <-second:
				t.Fatal("the second slot went before the first had ended")
			default:
			}
			a.done()
			synctest.Wait()
			if b := <-second; !b.fire {
				t.Fatal("the second slot was not fired")
			} else {
				b.done()
			}
			// The next fire is this host's own, at once.
			if got := <-slot(t.Context(), g, j); !got.fire {
				t.Error("the new owner did not fire its own slot")
			}
		})
	})
	t.Run("a view that stops coming: the waiting fire goes, and so do the next", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := clock.NewFake(t0)
			g := New(next, c, 3*time.Second, time.Second)
			g.Update(view(c, member(owner, t0, j), member(next, t0, j)))
			waiting := slot(t.Context(), g, j)
			synctest.Wait()
			c.Advance(Margin + 5*time.Second)
			synctest.Wait()
			if got := <-waiting; !got.fire {
				t.Fatal("the waiting fire was left with no view to tell")
			} else {
				got.done()
			}
			if got := <-slot(t.Context(), g, j); !got.fire {
				t.Error("a host with a stale view did not fire")
			}
		})
	})
	t.Run("shutdown leaves a waiting fire", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := clock.NewFake(t0)
			g := New(next, c, 3*time.Second, time.Second)
			g.Update(view(c, member(owner, t0, j), member(next, t0, j)))
			ctx, cancel := context.WithCancel(t.Context())
			waiting := slot(ctx, g, j)
			synctest.Wait()
			cancel()
			if got := <-waiting; got.fire {
				t.Error("a cancelled waiting fire fired")
			}
		})
	})
	t.Run("no view yet: this host fires", func(t *testing.T) {
		g := New(next, clock.NewFake(t0), 3*time.Second, time.Second)
		if f, _ := g.Slot(t.Context(), j); !f {
			t.Error("a host without a view left the slot")
		}
		if _, ok := g.Owner(j); ok {
			t.Error("Owner without a view")
		}
	})
}
