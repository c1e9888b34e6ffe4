package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"cronvisor/internal/proc"
)

func newHeartbeat(g *globals) *cobra.Command {
	var progress string
	cmd := &cobra.Command{
		Use:   "heartbeat [--progress TEXT]",
		Short: "From inside a run: tell cronvisor the run is alive, with its progress",
		Long: `From inside a run of a job: write one beat to the run's heartbeat pipe, the
descriptor named by ` + proc.EnvHeartbeatFD + `, and exit 0. A job with heartbeat_timeout
is ended (outcome timeout, "no heartbeat for D") when it has not beaten for that
long; every job's last --progress shows in status, the console and its history
record. It needs no daemon, socket or state dir. Outside a run (the variable
unset, or its descriptor not a pipe) it exits 1. The progress text is made one
line of at most 200 bytes. See docs/heartbeats.md.`,
		Example: `  cronvisor heartbeat
  cronvisor heartbeat --progress "$i/$n files"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return beat(os.Getenv(proc.EnvHeartbeatFD), progress)
		},
	}
	cmd.Flags().StringVar(&progress, "progress", "", "the run's progress, shown in status (one line, at most 200 bytes)")
	return cmd
}

// beat writes one beat line to the descriptor fdText names.
func beat(fdText, progress string) error {
	if fdText == "" {
		return exitCode(1, fmt.Errorf("heartbeat: %s is not set: not inside a run of cronvisor", proc.EnvHeartbeatFD))
	}
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return exitCode(1, fmt.Errorf("heartbeat: %s=%q is not a descriptor above 2", proc.EnvHeartbeatFD, fdText))
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return exitCode(1, fmt.Errorf("heartbeat: %s=%d is not the run's heartbeat pipe (closed, or not a pipe)", proc.EnvHeartbeatFD, fd))
	}
	// One write of a line under PIPE_BUF: never mixed with another
	// process's beat.
	line := []byte(proc.FormatBeat(progress))
	for {
		_, err = unix.Write(fd, line)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return exitCode(1, fmt.Errorf("heartbeat: writing to %s=%d: %w", proc.EnvHeartbeatFD, fd, err))
	}
	return nil
}
