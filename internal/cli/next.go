package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/schedule"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
)

func newNext(g *globals) *cobra.Command {
	var o nextOptions
	cmd := &cobra.Command{
		Use:   "next EXPR-or-JOB",
		Short: "Print the next fire times of a schedule or of a job in jobs.yaml",
		Long: `Print the next fire times (slots) of a schedule expression or of a job of
jobs.yaml, one RFC 3339 time with offset per line, like systemd-analyze calendar.
On a terminal, or with -v, each line also names the weekday; through a pipe the
lines are the bare times, for scripts.
An argument with a space or starting with '@' is an expression; otherwise it
names a job (whose timezone applies unless --tz is given).
H and ~ in a job's schedule are drawn from its name, as on every host; in an
expression given alone they are drawn for the empty name. For a job with a
jitter each line is the fire instant: the slot plus the delay drawn from the
job's name and slot; on a terminal, or with -v, the slot and delay follow.`,
		Example: `  cronvisor next '*/5 * * * *' -n 3
  cronvisor next '@every 90s' --from 2026-01-01T00:00:00Z
  cronvisor next '30 2 * * *' --tz America/New_York --from 2026-03-07T12:00:00-05:00
  cronvisor next sync_orders`,
		Args: argsExactly(1, "one schedule expression or job name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(g, args[0])
		},
	}
	cmd.Flags().IntVarP(&o.count, "count", "n", 5, "how many fire times to print")
	cmd.Flags().StringVar(&o.from, "from", "", "start after this RFC 3339 time instead of now")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "add the weekday to each line, and a jittered job's slot and delay (the default on a terminal)")
	cmd.Flags().StringVar(&o.tz, "tz", "", "IANA time zone to evaluate the schedule in (default: the job's, else local)")
	return cmd
}

// nextOptions are next's flags.
type nextOptions struct {
	count   int
	from    string
	tz      string
	verbose bool
}

func (o nextOptions) run(g *globals, arg string) error {
	start, loc, err := o.parse()
	if err != nil {
		return err
	}
	job := config.Job{Schedule: arg}
	if !looksLikeExpr(arg) {
		if job, err = nextJob(g, arg); err != nil {
			return err
		}
		if loc == nil {
			loc = job.Location
		}
	}
	if loc == nil {
		loc = time.Local
	}
	// An expression alone draws H and ~ for the empty name; a job for its own.
	s, err := schedule.ParseFor(job.Schedule, loc, job.Name)
	if err != nil {
		return exitCode(1, err)
	}
	times := schedule.NextN(s, start, o.count)
	verbose := o.verbose || writerIsTerminal(g.stdout)
	for _, t := range times {
		fmt.Fprintln(g.stdout, nextLine(&job, t.In(zoneOf(t, loc)), verbose))
	}
	if len(times) < o.count {
		fmt.Fprintf(g.stderr, "cronvisor: %q fires %d time(s) at most after %s\n", arg, len(times), start.Format(time.RFC3339))
		if len(times) == 0 {
			return exitCode(1, nil)
		}
	}
	return nil
}

// nextLine is one line of next for slot: the slot (and its weekday when
// verbose); for a job with a jitter, the fire instant, the slot plus its
// drawn delay, and when verbose the weekday, the slot and the delay.
func nextLine(job *config.Job, slot time.Time, verbose bool) string {
	if job.Jitter <= 0 {
		if verbose {
			return slot.Format(time.RFC3339) + "  " + slot.Format("Mon")
		}
		return slot.Format(time.RFC3339)
	}
	layout := time.RFC3339
	if job.Jitter < time.Second {
		layout = time.RFC3339Nano // the delay is under a second
	}
	delay := job.Delay(slot)
	fire := slot.Add(delay)
	if !verbose {
		return fire.Format(layout)
	}
	return fmt.Sprintf("%s  %s  slot %s +%s", fire.Format(layout), fire.Format("Mon"), slot.Format(time.RFC3339), delay)
}

// parse checks the flags: the start (now without --from) and the zone
// (nil without --tz).
func (o nextOptions) parse() (time.Time, *time.Location, error) {
	if o.count < 1 {
		return time.Time{}, nil, usageError("-n must be at least 1, got %d", o.count)
	}
	start := time.Now()
	if o.from != "" {
		t, err := time.Parse(time.RFC3339Nano, o.from)
		if err != nil {
			return time.Time{}, nil, usageError("--from %q is not an RFC 3339 time (e.g. 2026-03-08T00:00:00-05:00)", o.from)
		}
		start = t
	}
	if o.tz == "" {
		return start, nil, nil
	}
	loc, err := time.LoadLocation(o.tz)
	if err != nil {
		return time.Time{}, nil, usageError("--tz %q is not a known time zone", o.tz)
	}
	return start, loc, nil
}

// looksLikeExpr tells a schedule expression from a job name: job names are
// [A-Za-z0-9_.-]+, expressions have spaces or start with '@'.
func looksLikeExpr(s string) bool {
	return strings.ContainsAny(s, " \t@=*")
}

// zoneOf keeps the time in the zone the schedule computed it in; a CRON_TZ
// prefix already set it.
func zoneOf(t time.Time, loc *time.Location) *time.Location {
	if t.Location() != time.UTC && t.Location() != time.Local {
		return t.Location()
	}
	return loc
}

// nextJob is the job next asks about. With a refused jobs.yaml on disk,
// the running daemon's schedule and zone for it are what fires: they are
// asked for, and the file's only without a daemon.
func nextJob(g *globals, name string) (config.Job, error) {
	cfg, refused, err := readConfig(g)
	if err != nil {
		return config.Job{}, err
	}
	if refused {
		if j, ok := daemonJob(cfg, name); ok {
			return j, nil
		}
	}
	job, ok := findJob(cfg, name)
	if !ok {
		// Not an expression either (those have a space or an @).
		return config.Job{}, noJob(g, cfg, name)
	}
	return job, nil
}

// daemonJob is the schedule and zone of the daemon's job called name.
func daemonJob(cfg *config.Config, name string) (config.Job, bool) {
	client, err := dialDaemon(statedir.Dir(cfg.StateDir).Socket())
	if err != nil {
		return config.Job{}, false
	}
	defer client.Close()
	jobs, err := client.Jobs(context.Background())
	if err != nil {
		return config.Job{}, false
	}
	for _, j := range jobs {
		if j.Name != name {
			continue
		}
		loc := time.Local
		if j.Timezone != "" {
			if l, err := time.LoadLocation(j.Timezone); err == nil {
				loc = l
			}
		}
		return config.Job{Name: j.Name, Schedule: j.Schedule, Location: loc}, true
	}
	return config.Job{}, false
}
