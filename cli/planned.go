package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// plannedCommands are commands of the contract this version does not have
// yet, with what to use meanwhile. They exist so that a script calling
// one is told so plainly (exit 1), rather than "unknown command".
var plannedCommands = []struct{ use, short, meanwhile string }{
	{"pause JOB...", "Pause jobs through the running daemon", "the console's p key pauses and resumes a job"},
	{"resume JOB...", "Resume paused jobs through the running daemon", "the console's p key pauses and resumes a job"},
	{"trigger JOB", "Fire a job now under its overlap policy", "the console's r key fires a job now"},
	{"kill JOB", "End a job's running run", "the console's x key ends a run"},
	{"reload", "Reload jobs.yaml in the running daemon", "send the daemon SIGHUP (kill -HUP PID), or edit jobs.yaml: the daemon watches it"},
	{"logs JOB", "Show a run's output", "the console's detail view shows a run's log; the files are in STATE_DIR/logs/JOB/"},
}

func newPlanned() []*cobra.Command {
	var cmds []*cobra.Command
	for _, p := range plannedCommands {
		cmds = append(cmds, &cobra.Command{
			Use:                p.use,
			Short:              p.short + " (not built in this version)",
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return exitCode(1, fmt.Errorf("%s is part of cronvisor's contract but not built in this version; meanwhile: %s", cmd.Name(), p.meanwhile))
			},
		})
	}
	return cmds
}
