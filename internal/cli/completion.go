package cli

import (
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"cronvisor/internal/config"
)

// jobArgs says how many leading arguments of a command are job names
// (-1: all of them), for commands whose arguments are.
func jobArgs(command string) (int, bool) {
	switch command {
	case "run", "next", "trigger", "kill", "logs":
		return 1, true
	case "pause", "resume", "status":
		return -1, true
	}
	return 0, false
}

// addCompletion makes the shells' completion (cobra's `completion` command
// and its hidden __complete protocol) offer the job names of --config
// where a command takes one. It goes by command name, so a command that
// replaces another of the same name keeps it.
func addCompletion(root *cobra.Command, g *globals) {
	for _, c := range root.Commands() {
		n, ok := jobArgs(c.Name())
		if !ok {
			continue
		}
		c.ValidArgsFunction = func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
			path := g.configPath
			if cmd.DisableFlagParsing {
				path, args = configArg(args, path)
			}
			if n >= 0 && len(args) >= n {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return matching(completionNames(path), args, prefix), cobra.ShellCompDirectiveNoFileComp
		}
	}
	if h, _, err := root.Find([]string{"history"}); err == nil && h.Flags().Lookup("job") != nil {
		_ = h.RegisterFlagCompletionFunc("job", func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
			return matching(completionNames(g.configPath), nil, prefix), cobra.ShellCompDirectiveNoFileComp
		})
		_ = h.RegisterFlagCompletionFunc("outcome", func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
			return matching(knownOutcomes(), nil, prefix), cobra.ShellCompDirectiveNoFileComp
		})
	}
	if a, _, err := root.Find([]string{"audit"}); err == nil && a.Flags().Lookup("job") != nil {
		_ = a.RegisterFlagCompletionFunc("job", func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
			return matching(completionNames(g.configPath), nil, prefix), cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// configArg takes --config out of the arguments of a command that parses
// no flags (cobra then hands them over as they were typed).
func configArg(args []string, def string) (string, []string) {
	var rest []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--config" && i+1 < len(args):
			def = args[i+1]
			i++
		case strings.HasPrefix(a, "--config="):
			def = strings.TrimPrefix(a, "--config=")
		default:
			rest = append(rest, a)
		}
	}
	return def, rest
}

// matching is the names starting with prefix that are not already given.
func matching(names, given []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) && !slices.Contains(given, n) {
			out = append(out, n)
		}
	}
	return out
}

// completionNames reads the job names of the file at path. A file being
// edited is often invalid for a moment; its names are still offered, read
// leniently, since completing them is harmless.
func completionNames(path string) []string {
	if cfg, _ := config.Load(path); cfg != nil {
		return jobNames(cfg)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var doc struct {
		Jobs []struct {
			Name string `yaml:"name"`
		} `yaml:"jobs"`
	}
	_ = yaml.Unmarshal(data, &doc) // a type error still fills what it could
	var names []string
	for _, j := range doc.Jobs {
		if j.Name != "" {
			names = append(names, j.Name)
		}
	}
	return names
}
