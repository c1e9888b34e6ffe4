package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"cronvisor/internal/config"
)

// jobNames lists the jobs of cfg in file order.
func jobNames(cfg *config.Config) []string {
	names := make([]string, len(cfg.Jobs))
	for i, j := range cfg.Jobs {
		names[i] = j.Name
	}
	return names
}

// noJob is the usage error for a job name cfg does not have: it offers the
// nearest names, or some of the jobs there are when none is near.
func noJob(g *globals, cfg *config.Config, name string) error {
	return noJobAmong(g, jobNames(cfg), name)
}

// noJobAmong is noJob for the jobs called names.
func noJobAmong(g *globals, names []string, name string) error {
	if len(names) == 0 {
		return usageError("no job %q in %s: it has no jobs", name, g.configPath)
	}
	if near := config.Nearest(name, names, 3); len(near) > 0 {
		return usageError("no job %q in %s; did you mean %s?", name, g.configPath, orList(near))
	}
	const shown = 8
	more := ""
	if len(names) > shown {
		more = fmt.Sprintf(" and %d more (cronvisor status lists them)", len(names)-shown)
		names = names[:shown]
	}
	return usageError("no job %q in %s; its jobs: %s%s", name, g.configPath, strings.Join(names, ", "), more)
}

// orList writes names as "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// writerIsTerminal reports whether w is a terminal: human output may then
// carry what a script reading a pipe must not see.
func writerIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
