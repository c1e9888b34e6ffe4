// Command floor is the idle floor of `cvbench compare idle`: the least a
// Go scheduler holding the same jobs costs. It reads a crontab of
// five-field lines (the one supercronic is given), parses each schedule
// with cronvisor's own parser, and waits on one timer for the earliest
// fire until SIGTERM. It never runs a job: no log, no lock, no history,
// no metrics, so its start-up CPU and memory are the table and the Go
// runtime alone.
//
//	floor CRONTAB
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"cronvisor/internal/base/schedule"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: floor CRONTAB")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

// run loads the crontab and sleeps until the earliest fire, again and
// again, until ctx ends.
func run(ctx context.Context, path string) error {
	scheds, err := load(path)
	if err != nil {
		return err
	}
	next := make([]time.Time, len(scheds))
	now := time.Now()
	for i, s := range scheds {
		next[i] = s.Next(now)
	}
	for {
		first := 0
		for i := range next {
			if next[i].Before(next[first]) {
				first = i
			}
		}
		if next[first].IsZero() { // no schedule fires again
			<-ctx.Done()
			return nil
		}
		t := time.NewTimer(time.Until(next[first]))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
			next[first] = scheds[first].Next(next[first])
		}
	}
}

// load parses the first five fields of every line as a schedule.
func load(path string) ([]schedule.Schedule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []schedule.Schedule
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			return nil, fmt.Errorf("%s:%d: want five schedule fields and a command", path, n)
		}
		s, err := schedule.Parse(strings.Join(fields[:5], " "), nil)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no jobs", path)
	}
	return out, sc.Err()
}
