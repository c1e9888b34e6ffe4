package bench

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/observe/outlog"
)

// chattyCommands are the jobs of BenchmarkChattyJob: 200 MB of output
// in lines of 2 bytes (`yes`) and of 1 KiB.
var chattyCommands = []struct{ name, command string }{
	{"2B-lines", "yes | head -c 200000000"},
	{"1KiB-lines", `yes "$(printf '%01023d' 0)" | head -c 200000000`},
}

// BenchmarkChattyJob is a job printing 200 MB, run as the daemon runs it
// (its output read from the pipes, handed to the run log of the history
// Writer, 1 MiB log_limit, and to the daemon log's outlog with
// log_output on), against the floor: the same command with its stdout
// on a pipe copied to io.Discard by this process. Each iteration runs
// one of each, so both see the same machine; the medians of their wall
// times and the ratio are reported.
func BenchmarkChattyJob(b *testing.B) {
	for _, c := range chattyCommands {
		b.Run(c.name, func(b *testing.B) {
			r := newRig(b, false, run.DurabilityMachine)
			out := outlog.New(slog.NewJSONHandler(io.Discard, nil)) // enabled, as the daemon's: its rate cap applies
			b.Cleanup(func() { out.Close() })
			r.fan.Listen(out.Handle)
			job := config.Job{Name: "chatty", Command: []string{"/bin/sh", "-c", c.command}, Timeout: time.Minute,
				KillGrace: time.Second, Overlap: config.OverlapSkip, Lock: "chatty", Enabled: true, LogOutput: true}
			slot := time.Now()
			var floor, guarded []time.Duration
			for b.Loop() {
				floor = append(floor, bareCopy(b, c.command))
				t0 := time.Now()
				if f := r.fire(job, &slot); f.Outcome != run.OK {
					b.Fatalf("outcome %s: %s", f.Outcome, f.Reason)
				}
				guarded = append(guarded, time.Since(t0))
			}
			mf, mg := medianOf(floor), medianOf(guarded)
			b.ReportMetric(mf.Seconds(), "floor-s")
			b.ReportMetric(mg.Seconds(), "daemon-s")
			b.ReportMetric(float64(mg)/float64(mf), "ratio")
		})
	}
}

// bareCopy runs command with its stdout on a pipe that it copies to
// io.Discard, and returns how long that took.
func bareCopy(b *testing.B, command string) time.Duration {
	t0 := time.Now()
	cmd := exec.CommandContext(context.Background(), "/bin/sh", "-c", command)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, stdout); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}
