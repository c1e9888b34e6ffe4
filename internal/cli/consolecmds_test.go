package cli

import (
	"io"
	"strings"
	"testing"

	"cronvisor/ui"
)

// TestTheConsolesCommandsParse: every command line the console's command
// strip shows (ui.CLICommands) is one this binary accepts: its verb
// exists, its flags parse and its arguments pass the verb's own check.
func TestTheConsolesCommandsParse(t *testing.T) {
	lines := ui.CLICommands("heartbeat")
	if len(lines) < 10 {
		t.Fatalf("only %d command lines: %q", len(lines), lines)
	}
	for _, line := range lines {
		t.Run(line, func(t *testing.T) {
			f := strings.Fields(line)
			if f[0] != "cronvisor" {
				t.Fatalf("%q is not a cronvisor command", line)
			}
			root := newRoot(&globals{stdout: io.Discard, stderr: io.Discard})
			c, rest, err := root.Find(f[1:])
			if err != nil || c == root || c.Name() != f[1] {
				t.Fatalf("no verb %q: %v", f[1], err)
			}
			if err := c.ParseFlags(rest); err != nil {
				t.Fatalf("flags: %v", err)
			}
			if err := c.ValidateArgs(c.Flags().Args()); err != nil {
				t.Fatalf("arguments: %v", err)
			}
			if strings.Contains(line, "--force") {
				if v, err := c.Flags().GetBool("force"); err != nil || !v {
					t.Errorf("--force did not parse: %v", err)
				}
			}
		})
	}
}
