package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"cronvisor/internal/config"
)

// newHelpJobs is the help topic `cronvisor help jobs.yaml`: the field
// reference, printed from the table the decoder takes its keys from.
func newHelpJobs() *cobra.Command {
	c := &cobra.Command{
		Use:   "jobs.yaml",
		Short: "Every key of jobs.yaml, its default and what it does",
	}
	c.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		writeReference(cmd.OutOrStdout(), config.Reference())
	})
	return c
}

func writeReference(out io.Writer, secs []config.Section) {
	fmt.Fprintln(out, "jobs.yaml: the keys cronvisor validate accepts, with their defaults.")
	fmt.Fprintln(out, "Durations are Go durations (90s, 10m, 1h30m). At the top level, keys")
	fmt.Fprintln(out, "starting with x- are ignored: a place for anchors to merge (<<) into jobs.")
	for _, sec := range secs {
		title := "top level"
		if sec.Path != "" {
			title = sec.Path
		}
		fmt.Fprintf(out, "\n%s: %s\n", title, sec.Doc)
		w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		for _, k := range sec.Keys {
			fmt.Fprintf(w, "  %s\t%s\t%s\n", k.Name, dash(k.Default), k.Doc)
		}
		_ = w.Flush()
	}
}
