package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// budgetRow is one group's figures in the memory budget.
type budgetRow struct {
	file, bss, resident  uint64  // bytes: in the file, without file bytes, on pages mapped in after start
	initMS, initB, initN float64 // medians: init clock ms, bytes and allocations
}

// budget prints what each dependency of o.cronvisor (unstripped) costs:
// binary bytes, resident bytes after a 3-job daemon's start, init time.
func budget(o options, w io.Writer) error {
	a, err := newAttributor(o.cronvisor)
	if err != nil {
		return err
	}
	syms, err := symbols(o.cronvisor)
	if err != nil {
		return err
	}
	rows := make([]budgetRow, len(budgetGroups()))
	var attributed uint64
	for _, s := range syms {
		g := a.group(s.pkg)
		if s.bss {
			rows[g].bss += s.size
		} else {
			rows[g].file += s.size
			attributed += s.size
		}
	}
	if err := initCosts(o, a, rows); err != nil {
		return err
	}
	start, err := residentCosts(o, a, syms, rows)
	if err != nil {
		return err
	}
	loaded, err := loadedBytes(o.cronvisor)
	if err != nil {
		return err
	}
	printBudget(w, o, rows, start)
	fmt.Fprintf(w, "\nloaded sections %.1f MiB, of which symbols above %.1f MiB; the rest (%.1f MiB) is the pclntab, "+
		"symbol-less rodata and padding\n", mib64(loaded), mib64(attributed), mib64(loaded-attributed))
	return nil
}

func mib64(b uint64) float64 { return float64(b) / (1 << 20) }

// loadedBytes sums bin's allocated sections that have file bytes.
func loadedBytes(bin string) (uint64, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS {
			n += s.Size
		}
	}
	return n, nil
}

// initLine is a line of GODEBUG=inittrace=1.
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, ([0-9.]+) ms clock, (\d+) bytes, (\d+) allocs`) // why process-wide: a compiled constant

// initCosts runs `cronvisor --version` o.reps times with inittrace on and
// sets each group's median init clock, bytes and allocations.
func initCosts(o options, a attributor, rows []budgetRow) error {
	per := make([][3][]float64, len(rows))
	for range o.reps {
		cmd := exec.Command(o.cronvisor, "--version")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s --version: %w", o.cronvisor, err)
		}
		sums := make([][3]float64, len(rows))
		sc := bufio.NewScanner(&stderr)
		for sc.Scan() {
			pkg, v, ok := parseInitLine(sc.Text())
			if !ok {
				continue
			}
			g := a.group(pkg)
			for k := range v {
				sums[g][k] += v[k]
			}
		}
		for g := range sums {
			for k := range sums[g] {
				per[g][k] = append(per[g][k], sums[g][k])
			}
		}
	}
	for g := range rows {
		rows[g].initMS, rows[g].initB, rows[g].initN = median(per[g][0]), median(per[g][1]), median(per[g][2])
	}
	return nil
}

// parseInitLine reads one inittrace line: the package (its path
// unescaped: inittrace writes "gopkg.in/yaml%2ev3"), its clock ms, bytes
// and allocations.
func parseInitLine(line string) (string, [3]float64, bool) {
	m := initLine.FindStringSubmatch(line)
	if m == nil {
		return "", [3]float64{}, false
	}
	var v [3]float64
	for k := range v {
		v[k], _ = strconv.ParseFloat(m[k+2], 64)
	}
	return strings.ReplaceAll(m[1], "%2e", "."), v, true
}

// startFigures are the whole process's figures after start.
type startFigures struct {
	rss, anon, heapInuse, heapAlloc, stacks float64 // MiB
}

// residentCosts starts a daemon with 3 hourly jobs and metrics on, waits
// rssSettle after its ready record, and adds to each group the bytes of
// its symbols that lie on pages mapped in (/proc/PID/pagemap's present
// bit): its share of the resident pages.
func residentCosts(o options, a attributor, syms []symbol, rows []budgetRow) (startFigures, error) {
	var f startFigures
	dir := filepath.Join(o.dir, "budget")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return f, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return f, err
	}
	addr := l.Addr().String()
	l.Close()
	minute := idleMinutes(time.Now())
	config := filepath.Join(dir, "jobs.yaml")
	if err := writeJobs(config, rssJobs, func(i int) string { return fmt.Sprintf("%d * * * *", minute(i)) },
		jobCommand(o, []string{"/bin/true"}), withAlerts(o, "metrics:\n  listen: "+addr+"\n")); err != nil {
		return f, err
	}
	d, err := startDaemon(o.cronvisor, config, dir)
	if err != nil {
		return f, err
	}
	defer func() { _ = d.stop(30 * time.Second) }()
	if _, err := d.waitReady(time.Minute); err != nil {
		return f, err
	}
	time.Sleep(rssSettle)
	mem, err := memStatus(filepath.Join("/proc", strconv.Itoa(d.pid()), "status"))
	if err != nil {
		return f, err
	}
	f.rss, f.anon = float64(mem[0])/1024, float64(mem[1])/1024
	if err := residentSymbols(d.pid(), a, syms, rows); err != nil {
		return f, err
	}
	f.heapInuse, f.heapAlloc, f.stacks, err = heapFigures(addr)
	return f, err
}

// residentSymbols adds to rows the bytes of each symbol on present pages.
func residentSymbols(pid int, a attributor, syms []symbol, rows []budgetRow) error {
	lo, hi := ^uint64(0), uint64(0)
	for _, s := range syms {
		lo, hi = min(lo, s.addr), max(hi, s.addr+s.size)
	}
	const page = 4096
	lo, hi = lo/page*page, (hi+page-1)/page*page
	pm, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "pagemap"))
	if err != nil {
		return err
	}
	defer pm.Close()
	buf := make([]byte, (hi-lo)/page*8)
	if _, err := pm.ReadAt(buf, int64(lo/page*8)); err != nil {
		return fmt.Errorf("pagemap: %w", err)
	}
	present := func(addr uint64) bool {
		return binary.LittleEndian.Uint64(buf[(addr-lo)/page*8:])&(1<<63) != 0
	}
	for _, s := range syms {
		g := a.group(s.pkg)
		for p := s.addr / page * page; p < s.addr+s.size; p += page {
			if present(p) {
				rows[g].resident += min(p+page, s.addr+s.size) - max(p, s.addr)
			}
		}
	}
	return nil
}

// heapFigures scrapes the Go collector's heap figures (MiB) from the
// daemon's /metrics.
func heapFigures(addr string) (inuse, alloc, stacks float64, err error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, 0, 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		n, perr := strconv.ParseFloat(v, 64)
		if !ok || perr != nil {
			continue
		}
		switch name {
		case "go_memstats_heap_inuse_bytes":
			inuse = n / (1 << 20)
		case "go_memstats_heap_alloc_bytes":
			alloc = n / (1 << 20)
		case "go_memstats_stack_inuse_bytes":
			stacks = n / (1 << 20)
		}
	}
	return inuse, alloc, stacks, sc.Err()
}

// printBudget prints the budget as a markdown table.
func printBudget(w io.Writer, o options, rows []budgetRow, f startFigures) {
	fmt.Fprintf(w, "memory budget of %s\n\n", describeBinary(o.cronvisor))
	fmt.Fprintf(w, "| dependency | binary KiB (text+rodata+data) | BSS KiB | resident KiB after start | "+
		"init ms (median of %d) | init allocations KiB |\n| --- | ---: | ---: | ---: | ---: | ---: |\n", o.reps)
	var t budgetRow
	for i, g := range budgetGroups() {
		r := rows[i]
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.0f | %.2f | %.1f |\n", g.name, float64(r.file)/1024, float64(r.bss)/1024,
			float64(r.resident)/1024, r.initMS, r.initB/1024)
		t.file, t.bss, t.resident = t.file+r.file, t.bss+r.bss, t.resident+r.resident
		t.initMS, t.initB = t.initMS+r.initMS, t.initB+r.initB
	}
	fmt.Fprintf(w, "| **total** | %.0f | %.0f | %.0f | %.2f | %.1f |\n", float64(t.file)/1024, float64(t.bss)/1024,
		float64(t.resident)/1024, t.initMS, t.initB/1024)
	fmt.Fprintf(w, "\n3-job daemon %v after ready: VmRSS %.1f MiB, RssAnon %.1f MiB; heap in use %.1f MiB (allocated %.1f), "+
		"stacks %.1f MiB (go_memstats_* of its /metrics)\n", rssSettle, f.rss, f.anon, f.heapInuse, f.heapAlloc, f.stacks)
}

// withAlerts is o with alerts as the extra jobs.yaml text writeJobs adds.
func withAlerts(o options, alerts string) options {
	o.alerts = alerts
	return o
}
