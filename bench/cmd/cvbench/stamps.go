package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// stampLine is one start as a stamp (bench/cmd/stamp, bench/stamp/*.c)
// wrote it: SLOT NOW JOB.
type stampLine struct {
	slot, now int64 // Unix nanoseconds
	job       string
	// inferred: the stamp had no slot ("-", a scheduler that does not set
	// $CRONVISOR_SCHEDULED_AT), so slot is now's second, floored. That is
	// right for every-second jobs started less than a second late; a later
	// start is read as an early start of the next slot (see checkFires).
	inferred bool
}

// parseStampLine reads one line of a stamp file.
func parseStampLine(text string) (stampLine, error) {
	fields := strings.Fields(text)
	if len(fields) < 2 || len(fields) > 3 {
		return stampLine{}, fmt.Errorf("bad stamp line %q", text)
	}
	now, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil || now <= 0 {
		return stampLine{}, fmt.Errorf("bad stamp line %q: clock reading", text)
	}
	l := stampLine{now: now}
	if len(fields) == 3 {
		l.job = fields[2]
	}
	if fields[0] == "-" {
		l.slot, l.inferred = now-now%int64(time.Second), true
		return l, nil
	}
	if l.slot, err = parseSlot(fields[0]); err != nil {
		return stampLine{}, fmt.Errorf("bad stamp line %q: slot: %v", text, err)
	}
	return l, nil
}

// floored is l with an inferred slot floored to period instead of the
// second: a scheduler that gives no slot, firing every period.
func (l stampLine) floored(period time.Duration) stampLine {
	if l.inferred && period > 0 {
		l.slot = l.now - l.now%int64(period)
	}
	return l
}

// slots is how many slots of period, from start, fall in [start, end).
func slots(start, end time.Time, period time.Duration) int {
	if !end.After(start) {
		return 0
	}
	return int((end.Sub(start)-1)/period) + 1
}

// parseSlot reads a stamp line's slot: Unix nanoseconds (the Go stamp)
// or $CRONVISOR_SCHEDULED_AT as given, RFC 3339 (the C stamps).
func parseSlot(field string) (int64, error) {
	if n, err := strconv.ParseInt(field, 10, 64); err == nil {
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, field)
	return t.UnixNano(), err
}

// readStampLines reads every line of a stamp file; an inferred slot is
// floored to period (a second, or a minute for the burst's jobs), which
// reads right every start less than period late.
func readStampLines(path string, period time.Duration) ([]stampLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []stampLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l, err := parseStampLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		lines = append(lines, l.floored(period))
	}
	return lines, sc.Err()
}

// readStamps reads the lines of a stamp file whose slot is in [start,
// end), slots every period: every start's lateness and, per slot, the
// latest.
func readStamps(path string, start, end time.Time, period time.Duration) (starts, last []time.Duration, err error) {
	lines, err := readStampLines(path, period)
	if err != nil {
		return nil, nil, err
	}
	starts, last = latenesses(lines, start, end)
	return starts, last, nil
}

// latenesses returns the lateness of every start whose slot is in [start,
// end) and, per slot, the latest.
func latenesses(lines []stampLine, start, end time.Time) (starts, last []time.Duration) {
	latest := map[int64]time.Duration{}
	for _, l := range lines {
		if l.slot < start.UnixNano() || l.slot >= end.UnixNano() {
			continue
		}
		late := time.Duration(l.now - l.slot)
		starts = append(starts, late)
		latest[l.slot] = max(latest[l.slot], late)
	}
	for _, d := range latest {
		last = append(last, d)
	}
	return starts, last
}

// fire is one job's slot.
type fire struct {
	job  string
	slot int64 // Unix nanoseconds
}

// fireCheck is what became of the fires of jobs 0..n-1 every period in a
// window.
type fireCheck struct {
	expected int
	started  int // fires with at least one start
	recorded int // fires with no start but a skip or failure record
	missing  int // fires with neither
	doubled  int // starts beyond a fire's first
}

// checkFires accounts for every fire of jobName(0..jobs-1) at each slot
// of period from start in [start, end): started (a stamp line), else recorded (in
// records, the daemon's skips and failures; nil for none), else missing.
// With inferred slots a start later than a period lands in the next slot:
// it shows as a missing fire followed by a doubled one, or, when the
// scheduler then skips the next slot, as a missing one; so both counts
// bound how many starts were misread.
func checkFires(lines []stampLine, jobs int, start, end time.Time, period time.Duration, records map[fire]bool) fireCheck {
	starts := map[fire]int{}
	for _, l := range lines {
		starts[fire{l.job, l.slot}]++
	}
	var c fireCheck
	for s := start; s.Before(end); s = s.Add(period) {
		for i := range jobs {
			f := fire{jobName(i), s.UnixNano()}
			c.expected++
			switch n := starts[f]; {
			case n > 0:
				c.started++
				c.doubled += n - 1
			case records[f]:
				c.recorded++
			default:
				c.missing++
			}
		}
	}
	return c
}
