// Command fleetbench measures fleets of cronvisor daemons on one
// PostgreSQL server (see package bench/fleetbench) and prints a line per
// fleet size, then a markdown table for BENCHMARKS.md:
//
//	fleetbench -cronvisor BIN -hosts 3,10,20 -jobs 50 -every 10s -duration 5m
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cronvisor/bench/fleetbench"
)

func main() {
	bin := flag.String("cronvisor", "cronvisor", "the cronvisor binary")
	hosts := flag.String("hosts", "3,10,20", "fleet sizes, comma-separated")
	jobs := flag.Int("jobs", 50, "jobs per host (the same on every host)")
	every := flag.Duration("every", 10*time.Second, "each job's period")
	duration := flag.Duration("duration", 5*time.Minute, "the measured window of each fleet")
	flag.Parse()
	abs, err := filepath.Abs(*bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		os.Exit(2)
	}
	var rows []fleetbench.Result
	for _, h := range strings.Split(*hosts, ",") {
		n, err := strconv.Atoi(h)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fleetbench: -hosts %q: %v\n", *hosts, err)
			os.Exit(2)
		}
		dir, err := os.MkdirTemp("", "fleetbench-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleetbench:", err)
			os.Exit(1)
		}
		r, err := fleetbench.Run(fleetbench.Config{Bin: abs, Hosts: n, Jobs: *jobs, Every: *every,
			Duration: *duration, Dir: dir, Log: os.Stderr})
		os.RemoveAll(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleetbench:", err)
			os.Exit(1)
		}
		fmt.Println(r)
		rows = append(rows, r)
	}
	fmt.Println("\n| hosts | slots | connections / slot | records / slot | skip records | server CPU / slot | run once | not run | twice |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range rows {
		n := float64(r.Slots)
		fmt.Printf("| %d | %d | %.2f | %.2f | %d | %.1f ms | %d | %d | %d |\n", r.Hosts, r.Slots,
			float64(r.Connections)/n, float64(r.Records)/n, r.Skips, float64(r.ServerCPU.Microseconds())/1000/n,
			r.RunOnce, r.Missed, r.Twice)
	}
}
