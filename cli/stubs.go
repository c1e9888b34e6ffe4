package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func runConsole(_ *cobra.Command, g *globals) error {
	// The TUI is a later piece of work; until it lands the console runs the
	// scheduler headless and says so, rather than pretending.
	fmt.Fprintln(g.stderr, "cronvisor: the interactive console is not built yet in this version; running headless like `cronvisor daemon` (Ctrl-C stops)")
	return runDaemon(g, "auto")
}

func newUI(_ *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "ui",
		Short: "Attach the live console to a running daemon (not built yet)",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			return notYet("`cronvisor ui` (the console attached to a daemon)")
		},
	}
}
