package durations

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

func secs(s ...float64) []Sample {
	out := make([]Sample, len(s))
	t0 := time.Unix(1_800_000_000, 0)
	for i, v := range s {
		out[i] = Sample{RunID: string(rune('a' + i)), Took: time.Duration(v * float64(time.Second)), Ended: t0.Add(-time.Duration(i) * time.Minute)}
	}
	return out
}

// TestComputeInterpolates: the quantiles of 1..11 s by linear
// interpolation (numpy's default), whatever the order of the samples.
func TestComputeInterpolates(t *testing.T) {
	st := Compute(secs(11, 1, 2, 10, 3, 9, 4, 8, 5, 7, 6))
	want := Stats{Runs: 11, P5: 1500 * time.Millisecond, P50: 6 * time.Second, P95: 10500 * time.Millisecond,
		P99: 10900 * time.Millisecond, Max: 11 * time.Second, Oldest: time.Unix(1_800_000_000, 0).Add(-10 * time.Minute)}
	recent := st.Recent
	st.Recent = nil
	if !reflect.DeepEqual(st, want) || fmt.Sprint(recent) != "[6s 7s 5s 8s 4s 9s 3s 10s 2s 1s 11s]" {
		t.Errorf("Compute = %+v, recent %v\nwant      %+v", st, recent, want)
	}
	if one := Compute(secs(3)); one.P5 != 3*time.Second || one.P99 != 3*time.Second || one.Runs != 1 {
		t.Errorf("one sample: %+v", one)
	}
	if st := Compute(nil); st.Runs != 0 || st.Recent != nil {
		t.Error("no sample: not zero")
	}
}

// TestWindowedKeepsTheNewestWithinKeepAge: at most Window samples, none
// that ended keepAge or longer ago.
func TestWindowedKeepsTheNewestWithinKeepAge(t *testing.T) {
	s := make([]float64, 70)
	all := secs(s...)
	now := time.Unix(1_800_000_000, 0)
	if n := len(Windowed(all, now, 0)); n != Window {
		t.Errorf("no keep_age: %d samples, want %d", n, Window)
	}
	if n := len(Windowed(all, now, 30*time.Minute)); n != 30 {
		t.Errorf("keep_age 30m: %d samples, want 30 (ended 0..29 minutes ago)", n)
	}
}

func TestBounds(t *testing.T) {
	few := Stats{Runs: MinSamples - 1, P5: time.Second, P99: time.Second}
	if _, _, ok := SlowBound(few); ok {
		t.Error("SlowBound judged below MinSamples")
	}
	if _, _, ok := FastBound(few); ok {
		t.Error("FastBound judged below MinSamples")
	}
	if _, _, ok := SuggestTimeout(few); ok {
		t.Error("SuggestTimeout judged below MinSamples")
	}
	for _, tc := range []struct {
		p99, slow, suggest time.Duration
	}{
		{11 * time.Second, 22 * time.Second, 80 * time.Second},                // p99 + margins
		{time.Second, 11 * time.Second, 70 * time.Second},                     // the margins rule
		{4*time.Minute + 10*time.Second, 500 * time.Second, 13 * time.Minute}, // 3 × 250 s = 12.5 min: to the minute
		{time.Hour, 2 * time.Hour, 3 * time.Hour},                             // to 10 minutes
	} {
		st := Stats{Runs: 50, P5: tc.p99 / 2, P99: tc.p99, Max: tc.p99}
		if b, basis, _ := SlowBound(st); b != tc.slow || basis != "p99 of the last 50 runs is "+Round(tc.p99).String() {
			t.Errorf("p99 %v: slow bound %v (%s), want %v", tc.p99, b, basis, tc.slow)
		}
		if s, _, _ := SuggestTimeout(st); s != tc.suggest {
			t.Errorf("p99 %v: suggested %v, want %v", tc.p99, s, tc.suggest)
		}
		if b, _, _ := FastBound(st); b != tc.p99/2/FastDivisor {
			t.Errorf("p99 %v: fast bound %v", tc.p99, b)
		}
	}
}

func TestTimeoutWarning(t *testing.T) {
	st := Stats{Runs: 50, P99: 11 * time.Second, Max: 12 * time.Second}
	for _, tc := range []struct {
		timeout time.Duration
		want    string
	}{
		{0, ""},
		{5 * time.Second, "timeout 5s is below the p99 of the last 50 runs (11s): runs that would end ok are killed; suggested timeout 1m20s"},
		{time.Minute, ""},
		{800 * time.Second, ""}, // exactly 10 × the suggestion
		{24 * time.Hour, "timeout 24h0m0s is far above the p99 of the last 50 runs (11s): a hang runs 24h0m0s before it is ended; suggested timeout 1m20s"},
	} {
		if got := TimeoutWarning(tc.timeout, st); got != tc.want {
			t.Errorf("timeout %v: %q, want %q", tc.timeout, got, tc.want)
		}
	}
	if got := TimeoutWarning(time.Second, Stats{Runs: 9, P99: time.Minute}); got != "" {
		t.Errorf("9 runs: %q", got)
	}
}

// source is a Source over samples by job, counting its reads; err fails them.
type source struct {
	samples map[string][]Sample
	reads   int
	err     error
	during  func() // runs inside a read, before it returns
}

func (s *source) OKSamples(_ context.Context, jobs []string, _ time.Time, limit int) (map[string][]Sample, error) {
	s.reads++
	if s.during != nil {
		s.during()
	}
	if s.err != nil {
		return nil, s.err
	}
	out := map[string][]Sample{}
	for _, j := range jobs {
		if v := s.samples[j]; len(v) > 0 {
			out[j] = v[:min(len(v), limit)]
		}
	}
	return out, nil
}

func end(job, id string, took time.Duration, at time.Time) run.End {
	return run.End{Job: job, RunID: id, Outcome: run.OK, Started: at.Add(-took), Ended: at, Attempt: 1}
}

// TestLearnerReadsOnceThenLearnsFromEnds: the first figures read the
// source; ends told afterwards join the window without a read; ends of
// a job never asked for are left to the store; an end told while the
// first read runs is merged, once, with what the read found.
func TestLearnerReadsOnceThenLearnsFromEnds(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	src := &source{samples: map[string][]Sample{"a": secs(10, 10, 10)}}
	l := NewLearner(LearnerConfig{Source: src, Now: func() time.Time { return now }})
	ctx := context.Background()
	l.Ended(ctx, end("b", "b1", time.Second, now)) // never asked: nothing kept
	if st, _ := l.Stats(ctx, "a"); st.Runs != 3 || st.P50 != 10*time.Second || src.reads != 1 {
		t.Fatalf("first read: %+v after %d reads", st, src.reads)
	}
	l.Ended(ctx, end("a", "a4", 20*time.Second, now.Add(time.Minute)))
	l.Ended(ctx, run.End{Job: "a", RunID: "a5", Outcome: run.Failed, Started: now, Ended: now.Add(time.Hour)})
	if st, _ := l.Stats(ctx, "a"); st.Runs != 4 || st.Max != 20*time.Second || src.reads != 1 {
		t.Errorf("after two ends: %+v after %d reads, want 4 runs (the failed one left out) and no read", st, src.reads)
	}
	// b is read now; an end told during that read, which the read also
	// found, is counted once.
	src.samples["b"] = secs(1)
	src.samples["b"][0].RunID = "b2"
	src.during = func() { l.Ended(ctx, end("b", "b2", time.Second, now)) }
	if st, _ := l.Stats(ctx, "b"); st.Runs != 1 {
		t.Errorf("b: %+v, want the run told during the read counted once", st)
	}
}

// TestLearnerWindowHoldsFifty: ends beyond Window push the oldest out.
func TestLearnerWindowHoldsFifty(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := NewLearner(LearnerConfig{Now: func() time.Time { return now }})
	ctx := context.Background()
	l.Stats(ctx, "a")
	for i := range 60 {
		l.Ended(ctx, end("a", "a"+string(rune('0'+i)), time.Duration(i+1)*time.Second, now))
	}
	st, _ := l.Stats(ctx, "a")
	if st.Runs != Window || st.Max != 60*time.Second || st.P5 < 11*time.Second ||
		len(st.Recent) != RecentRuns || st.Recent[0] != 45*time.Second || st.Recent[RecentRuns-1] != 60*time.Second {
		t.Errorf("%+v, want the newest 50: 11..60 s, the last 16 of them recent", st)
	}
}

// TestLearnerFailedReadIsRetried: a source that fails gives no figures
// and is read again next time.
func TestLearnerFailedReadIsRetried(t *testing.T) {
	src := &source{samples: map[string][]Sample{"a": secs(1)}, err: errors.New("disk on fire")}
	l := NewLearner(LearnerConfig{Source: src, Now: time.Now})
	if _, err := l.Stats(context.Background(), "a"); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("err = %v", err)
	}
	src.err = nil
	if st, err := l.Stats(context.Background(), "a"); err != nil || st.Runs != 1 {
		t.Errorf("second read: %+v, %v", st, err)
	}
}

// TestEndedJudgesFast: with warn_fast auto, an ok run under p5/4 is fast,
// judged on the window before it joins; a fixed warn_fast needs no
// history; off judges nothing; too few runs judge nothing.
func TestEndedJudgesFast(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tens := make([]float64, 50)
	for i := range tens {
		tens[i] = 9 + 2*float64(i)/49
	}
	src := &source{samples: map[string][]Sample{"auto": secs(tens...), "few": secs(tens[:9]...), "off": secs(tens...)}}
	rules := map[string]FastRule{"auto": {Learned: true}, "few": {Learned: true}, "fixed": {Below: 30 * time.Second}}
	l := NewLearner(LearnerConfig{Source: src, Now: func() time.Time { return now },
		Fast: func(job string) FastRule { return rules[job] }})
	ctx := context.Background()
	f, ok := l.Ended(ctx, end("auto", "x1", 200*time.Millisecond, now))
	if !ok || f.Took != 200*time.Millisecond || f.Reason != "ended ok in 200ms; p5 of the last 50 runs is 9.1s" || f.Bound.Round(time.Millisecond) != 2275*time.Millisecond {
		t.Errorf("auto: %+v %v", f, ok)
	}
	if _, ok := l.Ended(ctx, end("auto", "x2", 9*time.Second, now)); ok {
		t.Error("auto: a usual run judged fast")
	}
	if f, ok := l.Ended(ctx, end("fixed", "x3", 20*time.Second, now)); !ok || f.Reason != "ended ok in 20s; warn_fast is 30s" {
		t.Errorf("fixed: %+v %v", f, ok)
	}
	for _, job := range []string{"few", "off"} {
		if f, ok := l.Ended(ctx, end(job, "y-"+job, 100*time.Millisecond, now)); ok {
			t.Errorf("%s: judged fast: %+v", job, f)
		}
	}
}
