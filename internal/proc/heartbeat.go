package proc

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// A run's heartbeat is a pipe whose write end the run inherits as fd
// HeartbeatFD, named in its environment by EnvHeartbeatFD; each line it
// writes there is a beat (FormatBeat, ParseBeat). The supervisor reads
// the beats while it lives, the run's keeper once it is dead (never both:
// a pipe's bytes go to one reader), and each ends a run that has not
// beaten for Heartbeat.Timeout as its deadline would. See
// docs/heartbeats.md.

// HeartbeatFD is the descriptor of a run's heartbeat pipe in the run:
// after fd 3, the run's lock (closed when the run has none).
const HeartbeatFD = 4

// SlotFD is the descriptor of a run's first resource slot (Spec.SlotFiles).
const SlotFD = 5

// EnvHeartbeatFD names HeartbeatFD in the run's environment.
const EnvHeartbeatFD = "CRONVISOR_HEARTBEAT_FD"

// MaxProgress is the most bytes of a beat's progress text that are kept;
// the rest of a longer text is cut off (at a character's start).
const MaxProgress = 200

// maxBeatLine is the longest line read as a beat: a longer one is no
// beat, and is skipped to its end.
const maxBeatLine = 4096

// BeatEvery is how often at most a run's OnBeat is told of its beats:
// a run may beat a hundred times a second, its observers need not hear
// each. The newest beat of a burst is told at the end of its window.
const BeatEvery = 250 * time.Millisecond

// ErrNoHeartbeat is Result.Err of a run ended (TimedOut) because it had
// not beaten for its Heartbeat.Timeout.
var ErrNoHeartbeat = errors.New("proc: no heartbeat")

// NoHeartbeatReason is the reason recorded for a run ended because it
// had not beaten for timeout: the same from the supervisor and the keeper.
func NoHeartbeatReason(timeout time.Duration) string {
	return "no heartbeat for " + timeout.String()
}

// Heartbeat asks for a heartbeat pipe beside the run.
type Heartbeat struct {
	// Timeout, if above zero, ends a run that has not beaten for this
	// long, counted from its start until its first beat, then from its
	// last: TimedOut, with Result.Err ErrNoHeartbeat. Zero: the beats
	// are read (progress), never awaited.
	Timeout time.Duration
	// OnBeat, if set, is told the run's newest beat, at most once per
	// BeatEvery. It is called from the pipe's reader and must be fast;
	// no call happens after Run returns.
	OnBeat func(Beat)
}

// Beat is one line a run wrote to its heartbeat pipe.
type Beat struct {
	Time     time.Time // when it was read
	Progress string    // "" for a bare beat
}

// FormatBeat is the line of a beat with progress (none for ""): "beat",
// or "beat " and the text, made one line of at most MaxProgress bytes
// (see cleanProgress), and a newline.
func FormatBeat(progress string) string {
	if p := cleanProgress(progress); p != "" {
		return "beat " + p + "\n"
	}
	return "beat\n"
}

// ParseBeat reads one line (without its newline; a trailing CR is
// dropped) as a beat: "beat" alone or "beat " and the progress text,
// which is cleaned as FormatBeat cleans it. ok is false for a line that
// is not a beat.
func ParseBeat(line string) (progress string, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	if line == "beat" {
		return "", true
	}
	rest, found := strings.CutPrefix(line, "beat ")
	if !found {
		return "", false
	}
	return cleanProgress(rest), true
}

// cleanProgress makes s a progress text: valid UTF-8, control
// characters (a newline among them) as spaces, leading and trailing
// spaces trimmed, at most MaxProgress bytes, cut at a character's start.
func cleanProgress(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > MaxProgress {
		cut := MaxProgress
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = strings.TrimSpace(s[:cut])
	}
	return s
}

// beatClock is the heartbeat's arithmetic, apart from its reading and
// its time: when the run is overdue, and when its observers are told.
type beatClock struct {
	timeout time.Duration // 0: never overdue
	since   time.Time     // the start, then the last beat
	told    time.Time     // when the observer was last told
	last    Beat          // the newest beat (Time zero: none yet)
	pending bool          // last is not told yet
	overdue bool          // the timeout passed: the run is being ended
}

func newBeatClock(timeout time.Duration, start time.Time) *beatClock {
	return &beatClock{timeout: timeout, since: start}
}

// beat takes a beat read at now; true if the observer is to be told now.
func (c *beatClock) beat(now time.Time, progress string) (tell bool) {
	c.since, c.last = now, Beat{Time: now, Progress: progress}
	if now.Sub(c.told) >= BeatEvery {
		c.told, c.pending = now, false
		return true
	}
	c.pending = true
	return false
}

// wake is the clock at now, when nothing was read: whether a pending
// beat is to be told, and whether the run just became overdue.
func (c *beatClock) wake(now time.Time) (tell, overdue bool) {
	if c.pending && now.Sub(c.told) >= BeatEvery {
		c.told, c.pending, tell = now, false, true
	}
	if c.timeout > 0 && !c.overdue && now.Sub(c.since) >= c.timeout {
		c.overdue, overdue = true, true
	}
	return tell, overdue
}

// next is when wake has something to do; zero for never.
func (c *beatClock) next() time.Time {
	var at time.Time
	if c.timeout > 0 && !c.overdue {
		at = c.since.Add(c.timeout)
	}
	if c.pending {
		if t := c.told.Add(BeatEvery); at.IsZero() || t.Before(at) {
			at = t
		}
	}
	return at
}

// beats reads a run's heartbeat pipe (one reader: the supervisor's, or
// its keeper's once it is dead) until stop.
type beats struct {
	r       *os.File // the read end, in the runtime's poller
	onBeat  func(Beat)
	overdue chan struct{} // closed once the run has not beaten for its timeout
	quit    chan struct{} // closed by stop
	done    chan struct{} // closed once the reader returned
	clock   *beatClock    // the reader's; stop reads last once it returned
}

// readBeats starts reading r, the run's start (or the keeper's take-over)
// at start.
func readBeats(r *os.File, timeout time.Duration, start time.Time, onBeat func(Beat)) *beats {
	b := &beats{r: r, onBeat: onBeat, overdue: make(chan struct{}), quit: make(chan struct{}),
		done: make(chan struct{}), clock: newBeatClock(timeout, start)}
	go b.read()
	return b
}

// overdueC is closed once the run is overdue; nil without beats.
func (b *beats) overdueC() <-chan struct{} {
	if b == nil {
		return nil
	}
	return b.overdue
}

// stop ends the reading (what the pipe still holds is left to whoever
// else reads it) and returns the newest beat; no OnBeat call follows.
func (b *beats) stop() Beat {
	if b == nil {
		return Beat{}
	}
	close(b.quit)
	b.r.Close() // a read under way returns at once
	<-b.done
	return b.clock.last
}

func (b *beats) read() {
	defer close(b.done)
	buf := make([]byte, 1024)
	var line []byte
	skipping := false // in a line over maxBeatLine
	for !isClosed(b.quit) {
		_ = b.r.SetReadDeadline(b.clock.next())
		n, err := b.r.Read(buf)
		now := time.Now()
		for chunk := buf[:n]; len(chunk) > 0; {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				line, skipping = appendBounded(line, chunk, skipping)
				break
			}
			line, skipping = appendBounded(line, chunk[:i], skipping)
			if p, ok := ParseBeat(string(line)); ok && !skipping && b.clock.beat(now, p) {
				b.tell()
			}
			line, skipping, chunk = line[:0], false, chunk[i+1:]
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			b.wake(now)
		case err != nil: // every writer closed it: the clock still runs
			b.await()
			return
		}
	}
}

// appendBounded appends p to line, or drops both once line would pass
// maxBeatLine (skipping to the line's end).
func appendBounded(line, p []byte, skipping bool) ([]byte, bool) {
	if skipping || len(line)+len(p) > maxBeatLine {
		return line[:0], true
	}
	return append(line, p...), false
}

// wake tells a pending beat and marks the run overdue, as the clock says.
func (b *beats) wake(now time.Time) {
	tell, overdue := b.clock.wake(now)
	if tell {
		b.tell()
	}
	if overdue {
		close(b.overdue)
	}
}

// await runs the clock after the pipe's end (the run closed its fd 4 but
// may still run) until stop.
func (b *beats) await() {
	for {
		at := b.clock.next()
		if at.IsZero() {
			<-b.quit
			return
		}
		t := time.NewTimer(time.Until(at))
		select {
		case <-b.quit:
			t.Stop()
			return
		case <-t.C:
			b.wake(time.Now())
		}
	}
}

func (b *beats) tell() {
	if b.onBeat != nil {
		b.onBeat(b.clock.last)
	}
}
