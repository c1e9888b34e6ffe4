// Command cronvisor is a job supervisor that replaces cron: it schedules the
// jobs of jobs.yaml itself and guards every run with a lock and a deadline.
package main

import (
	"os"
	_ "time/tzdata" // zone names work on machines without a zone database

	"cronvisor/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], os.Stdout, os.Stderr))
}
