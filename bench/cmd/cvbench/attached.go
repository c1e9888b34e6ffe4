package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// attached measures what the console costs the scheduler: each rep runs
// the lateness scenario on a daemon alone and on a daemon with
// `cronvisor ui` attached in a real terminal (a detached tmux session that
// the console redraws every second), alternating so that both see the same
// machine.
func attached(o options, w io.Writer) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		return fmt.Errorf("the attached scenario needs tmux: %w", err)
	}
	var alone, ui []latencyRun
	for rep := range o.reps {
		a, err := runCronvisor(o, rep, nil)
		if err != nil {
			return err
		}
		a.label = fmt.Sprintf("alone #%d", rep+1)
		u, err := runCronvisor(o, rep, attachConsole)
		if err != nil {
			return err
		}
		u.label = fmt.Sprintf("ui #%d", rep+1)
		alone, ui = append(alone, a), append(ui, u)
	}
	fmt.Fprintf(w, "attached: %d job(s) every second, daemon alone vs with `cronvisor ui` attached in tmux; window %v after %v warm-up, %d rep(s); times in ms\n",
		o.jobs, o.duration, o.warmup, o.reps)
	printPairs(w, alone, ui)
	printComparison(w, alone, ui, "alone", "ui", "attached/alone", "daemon cpu/fire")
	return nil
}

// attachConsole starts `cronvisor ui` on the daemon's config in a 120x40
// tmux session on a private server and returns what ends it. It waits
// until the console shows the jobs, so that the window measures a
// console that is live.
func attachConsole(o options, config, dir string) (func(), error) {
	socket := "cvbench-" + strconv.Itoa(os.Getpid())
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g status off\n"), 0o644); err != nil {
		return nil, err
	}
	tmux := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return exec.CommandContext(ctx, "tmux", append([]string{"-L", socket, "-f", conf}, args...)...).CombinedOutput()
	}
	stop := func() { _, _ = tmux("kill-server") }
	if out, err := tmux("new-session", "-d", "-x", "120", "-y", "40", "-c", dir, "--",
		o.cronvisor, "--config", config, "ui"); err != nil {
		stop()
		return nil, fmt.Errorf("tmux new-session: %v: %s", err, out)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out, err := tmux("capture-pane", "-p")
		if err == nil && strings.Contains(string(out), jobName(0)) {
			return consoleCost(tmux, o.consoleKeys, stop)
		}
	}
	out, _ := tmux("capture-pane", "-p")
	stop()
	return nil, fmt.Errorf("the console did not show the jobs in 10 s; screen:\n%s", out)
}

// consoleCost types keys into the console, then returns a stop that
// says, before it ends the console, what the console cost from then on:
// its CPU a second and its RSS.
func consoleCost(tmux func(args ...string) ([]byte, error), keys string, stop func()) (func(), error) {
	for _, k := range keys {
		if out, err := tmux("send-keys", string(k)); err != nil {
			stop()
			return nil, fmt.Errorf("tmux send-keys %c: %v: %s", k, err, out)
		}
	}
	out, err := tmux("list-panes", "-F", "#{pane_pid}")
	pid, perr := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || perr != nil {
		stop()
		return nil, fmt.Errorf("tmux list-panes: %v %v: %s", err, perr, out)
	}
	t0 := time.Now()
	u0, err := readUsage(pid)
	if err != nil {
		stop()
		return nil, err
	}
	return func() {
		if u1, err := readUsage(pid); err == nil {
			s := time.Since(t0).Seconds()
			fmt.Printf("console (keys %q): %.2f ms CPU/s over %.0f s, RSS %.1f MB\n",
				keys, float64(u1.cpu-u0.cpu)/float64(time.Millisecond)/s, s, float64(u1.rss)/1024)
		}
		stop()
	}, nil
}
