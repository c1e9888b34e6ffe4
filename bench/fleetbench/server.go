package fleetbench

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the kernel's USER_HZ: /proc's CPU times are in its ticks.
const clockTick = 100

// serverCPU is the CPU time of the server in dataDir's parent: its
// postmaster's own and its reaped children's, and its live children's.
func serverCPU(dir string) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	pm, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return 0, err
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var ticks int64
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, ok := procStat(pid)
		if !ok || (pid != pm && f[1] != strconv.Itoa(pm)) { // fields from state on: [1] is the ppid
			continue
		}
		own := atoi(f[11]) + atoi(f[12]) // utime, stime
		if pid == pm {
			own += atoi(f[13]) + atoi(f[14]) // cutime, cstime: the backends that exited
		}
		ticks += own
	}
	return time.Duration(ticks) * time.Second / clockTick, nil
}

// procStat is /proc/PID/stat's fields after the command's name.
func procStat(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	f := strings.Fields(s[i+1:])
	return f, len(f) > 14
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// connections counts the connections the server accepted in [from, to),
// from its log's "connection received" lines (log_connections, each
// prefixed with its time in UTC).
func connections(log string, from, to time.Time) (int, error) {
	f, err := os.Open(log)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "connection received") || len(line) < 23 {
			continue
		}
		at, err := time.Parse("2006-01-02 15:04:05.000", line[:23])
		if err != nil {
			continue
		}
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return n, sc.Err()
}
