package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/harness/testlog"
)

func TestParseBeat(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", MaxProgress) // 2 bytes each: cut at a character's start
	for _, c := range []struct {
		name, line, progress string
		ok                   bool
	}{
		{"bare", "beat", "", true},
		{"bare CRLF", "beat\r", "", true},
		{"progress", "beat 3/10", "3/10", true},
		{"progress with spaces", "beat  copying  a b ", "copying  a b", true},
		{"empty progress", "beat ", "", true},
		{"control characters", "beat a\tb\x00c", "a b c", true},
		{"invalid UTF-8", "beat a\xffb", "a\uFFFDb", true},
		{"long", "beat " + long, long[:MaxProgress], true},
		{"not a beat", "hello", "", false},
		{"prefix only", "beating", "", false},
		{"upper case", "BEAT", "", false},
		{"empty", "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ok := ParseBeat(c.line)
			if p != c.progress || ok != c.ok {
				t.Errorf("ParseBeat(%q) = %q, %v; want %q, %v", c.line, p, ok, c.progress, c.ok)
			}
		})
	}
}

func TestFormatBeat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, progress, line string }{
		{"bare", "", "beat\n"},
		{"progress", "3/10", "beat 3/10\n"},
		{"multi-line", "a\nb\r\n", "beat a b\n"},
		{"spaces only", "  ", "beat\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := FormatBeat(c.progress); got != c.line {
				t.Errorf("FormatBeat(%q) = %q, want %q", c.progress, got, c.line)
			}
		})
	}
}

// FuzzBeatLine: every line FormatBeat writes is one line that ParseBeat
// reads back as the same progress, within MaxProgress and valid UTF-8.
func FuzzBeatLine(f *testing.F) {
	for _, s := range []string{"", "3/10", "a\nb", "\xff\xfe", strings.Repeat("ü", 150)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, progress string) {
		line := FormatBeat(progress)
		body, ok := strings.CutSuffix(line, "\n")
		if !ok || strings.ContainsAny(body, "\n\r") {
			t.Fatalf("FormatBeat(%q) = %q: not one line", progress, line)
		}
		p, ok := ParseBeat(body)
		if !ok || len(p) > MaxProgress || !utf8.ValidString(p) {
			t.Fatalf("ParseBeat(%q) = %q, %v", body, p, ok)
		}
		if want := cleanProgress(progress); p != want {
			t.Fatalf("read back %q, want %q", p, want)
		}
		if q, _ := ParseBeat(progress); len(q) > MaxProgress {
			t.Fatalf("ParseBeat kept %d bytes", len(q))
		}
	})
}

// TestBeatClock: overdue after the timeout from the start, then from the
// last beat; observers told at most once per BeatEvery, the last beat of
// a burst at the end of its window.
func TestBeatClock(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	c := newBeatClock(2*time.Second, t0)
	if got := c.next(); !got.Equal(at(2 * time.Second)) {
		t.Fatalf("next %v, want the start + 2s", got)
	}
	if tell := c.beat(at(time.Second), "1"); !tell {
		t.Error("the first beat was not told at once")
	}
	if tell := c.beat(at(time.Second+100*time.Millisecond), "2"); tell {
		t.Error("a beat within BeatEvery of the last told was told at once")
	}
	if got := c.next(); !got.Equal(at(time.Second + BeatEvery)) {
		t.Errorf("next %v, want the end of the window", got)
	}
	if tell, overdue := c.wake(at(time.Second + BeatEvery)); !tell || overdue {
		t.Errorf("wake at the window's end: tell %v overdue %v, want the pending beat told", tell, overdue)
	}
	if c.last.Progress != "2" {
		t.Errorf("last %q, want 2", c.last.Progress)
	}
	if got := c.next(); !got.Equal(at(3*time.Second + 100*time.Millisecond)) {
		t.Errorf("next %v, want the last beat + 2s", got)
	}
	if _, overdue := c.wake(at(3 * time.Second)); overdue {
		t.Error("overdue before the timeout passed since the last beat")
	}
	if _, overdue := c.wake(at(3*time.Second + 100*time.Millisecond)); !overdue {
		t.Error("not overdue 2s after the last beat")
	}
	if _, overdue := c.wake(at(time.Hour)); overdue || !c.next().IsZero() {
		t.Error("overdue told twice")
	}
	off := newBeatClock(0, t0)
	if _, overdue := off.wake(at(time.Hour)); overdue || !off.next().IsZero() {
		t.Error("a clock without a timeout went overdue")
	}
}

func TestWithHeartbeat(t *testing.T) {
	t.Parallel()
	w, lock := os.NewFile(100, "w"), os.NewFile(101, "lock")
	if got := withHeartbeat(nil, w); len(got) != 2 || got[0] != nil || got[1] != w {
		t.Errorf("without a lock: %v, want [nil w]", got)
	}
	extra := []*os.File{lock}
	if got := withHeartbeat(extra, w); len(got) != 2 || got[0] != lock || got[1] != w {
		t.Errorf("with a lock: %v, want [lock w]", got)
	}
}

// TestSlotFDs: resource slots are fds 5, 6, ... with or without a lock
// (fd 3) and a heartbeat (fd 4), which keep their numbers.
func TestSlotFDs(t *testing.T) {
	t.Parallel()
	w, lock, a, b := os.NewFile(100, "w"), os.NewFile(101, "lock"), os.NewFile(102, "a"), os.NewFile(103, "b")
	for _, tc := range []struct {
		name        string
		extra, want []*os.File
		beat        bool
	}{
		{"lock, beat, two slots", []*os.File{lock}, []*os.File{lock, w, a, b}, true},
		{"no lock (overlap allow)", nil, []*os.File{nil, w, a, b}, true},
		{"no heartbeat", []*os.File{lock}, []*os.File{lock, nil, a, b}, false},
	} {
		got := withSlots(tc.extra, []*os.File{a, b})
		if tc.beat {
			got = withHeartbeat(got, w)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := withSlots([]*os.File{lock}, nil); !slices.Equal(got, []*os.File{lock}) {
		t.Errorf("no slots: %v, want the lock alone", got)
	}
}

// beatRecorder keeps what OnBeat was told.
type beatRecorder struct {
	mu    sync.Mutex
	beats []Beat
}

func (r *beatRecorder) onBeat(b Beat) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.beats = append(r.beats, b)
}

func (r *beatRecorder) progress() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, b := range r.beats {
		out = append(out, b.Progress)
	}
	return out
}

// TestHeartbeatEndsASilentRun: a real run that beats through fd 4 (fd 3
// closed, no lock) and then stops is ended as a deadline ends it, its
// timeout after its last beat; observers heard its progress.
func TestHeartbeatEndsASilentRun(t *testing.T) {
	t.Parallel()
	rec := &beatRecorder{}
	script := `[ "$CRONVISOR_HEARTBEAT_FD" = 4 ] || exit 3
		{ true >&3; } 2>/dev/null && exit 4
		for i in 1 2; do echo "beat $i/3" >&4; sleep 0.1; done
		date +%s%N > "$0"; echo "beat 3/3" >&4; exec sleep 30`
	last := filepath.Join(t.TempDir(), "last")
	spec := Spec{Argv: []string{"/bin/sh", "-c", script, last}, KillGrace: time.Second,
		Tag:       "CRONVISOR_RUN_ID=hb-silent-" + strconv.Itoa(os.Getpid()),
		Heartbeat: &Heartbeat{Timeout: 500 * time.Millisecond, OnBeat: rec.onBeat}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := Run(ctx, spec)
	if res.Outcome != TimedOut || !errors.Is(res.Err, ErrNoHeartbeat) {
		t.Fatalf("got %v (%v), exit %d; want TimedOut by ErrNoHeartbeat", res.Outcome, res.Err, res.ExitCode)
	}
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	after := res.Ended.Sub(time.Unix(0, ns))
	t.Logf("ended %v after the last beat", after.Round(time.Millisecond))
	if after < 500*time.Millisecond || after > 3*time.Second { // the time is written just before the beat
		t.Errorf("ended %v after the last beat, want about 500ms", after)
	}
	if res.Beat.Progress != "3/3" {
		t.Errorf("Result.Beat %+v, want progress 3/3", res.Beat)
	}
	if got := rec.progress(); len(got) == 0 || got[len(got)-1] != "3/3" {
		t.Errorf("OnBeat told %q, want the last 3/3", got)
	}
}

// TestHeartbeatKeepsABeatingRun: a run beating more often than its
// timeout runs to its end, even when it closes its fd 4 before it.
func TestHeartbeatKeepsABeatingRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, script string }{
		{"beats to its end", `for i in 1 2 3 4 5 6 7 8; do echo beat >&4; sleep 0.1; done`},
		{"closes fd 4, exits in time", `echo beat >&4; exec 4>&-; sleep 0.2`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			spec := Spec{Argv: []string{"/bin/sh", "-c", c.script}, Heartbeat: &Heartbeat{Timeout: 400 * time.Millisecond}}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if res := Run(ctx, spec); res.Outcome != Exited || res.ExitCode != 0 {
				t.Fatalf("got %v (%v), exit %d; want exited 0", res.Outcome, res.Err, res.ExitCode)
			}
		})
	}
	t.Run("closes fd 4, runs on", func(t *testing.T) {
		t.Parallel()
		spec := Spec{Argv: []string{"/bin/sh", "-c", "exec 4>&-; sleep 30"}, Heartbeat: &Heartbeat{Timeout: 300 * time.Millisecond}}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if res := Run(ctx, spec); res.Outcome != TimedOut || !errors.Is(res.Err, ErrNoHeartbeat) {
			t.Fatalf("got %v (%v); want TimedOut by ErrNoHeartbeat", res.Outcome, res.Err)
		}
	})
}

// TestKeeperEndsASilentRun: once the supervisor hands the run over (as
// its death would), the keeper reads the beats and ends the run that
// stopped beating, timed out, with the reason and the last progress in
// its End.
func TestKeeperEndsASilentRun(t *testing.T) {
	t.Parallel()
	dir := statedir.Dir(t.TempDir())
	runID := "hb-keeper-" + strconv.Itoa(os.Getpid())
	handed, beaten := filepath.Join(t.TempDir(), "handed"), filepath.Join(t.TempDir(), "beaten")
	script := `echo "beat 1" >&4; touch "$1"; while [ ! -e "$0" ]; do sleep 0.02; done
		for i in 2 3 4; do echo "beat $i" >&4; sleep 0.1; done; exec sleep 30`
	spec := Spec{
		Argv: []string{"/bin/sh", "-c", script, handed, beaten}, KillGrace: time.Second,
		Tag: "CRONVISOR_RUN_ID=" + runID, Keepers: NewKeepers(),
		Keeper:    &Keeper{End: dir.RunEnd(runID), Run: KeptRun{Job: "j"}},
		Heartbeat: &Heartbeat{Timeout: 500 * time.Millisecond},
	}
	t.Cleanup(spec.Keepers.Close)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := make(chan Result, 1)
	go func() { done <- Run(ctx, spec) }()
	if !testlog.Poll(10*time.Second, func() bool { _, err := os.Stat(beaten); return err == nil }) {
		t.Fatal("the run did not beat")
	}
	cancel(ErrDetach)
	if res := <-done; res.Outcome != Detached {
		t.Fatalf("got %v (%v), want Detached", res.Outcome, res.Err)
	}
	handedAt := time.Now()
	if err := os.WriteFile(handed, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var end End
	if !testlog.Poll(15*time.Second, func() bool { var err error; end, err = ReadEnd(dir.RunEnd(runID)); return err == nil }) {
		t.Fatal("the keeper wrote no End")
	}
	took := end.Ended.Sub(handedAt)
	t.Logf("End %+v, %v after the hand-over", end, took.Round(time.Millisecond))
	if end.Outcome != TimedOut || end.Reason != "no heartbeat for 500ms" || end.Progress != "4" {
		t.Errorf("End %s %q progress %q; want timed_out, no heartbeat for 500ms, 4", end.Outcome, end.Reason, end.Progress)
	}
	if took < 700*time.Millisecond || took > 5*time.Second {
		t.Errorf("ended %v after the hand-over, want about 0.3s of beats and 0.5s of silence", took)
	}
}
