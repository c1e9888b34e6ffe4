package config

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	"gopkg.in/yaml.v3"
)

// Unlimited is the value of nofile, nproc and core written as unlimited
// (RLIM_INFINITY).
const Unlimited = math.MaxUint64

// nice decodes the run's scheduling priority.
func (d *decoder) nice(j *Job, n *yaml.Node, key string) {
	if v, ok := d.intIn(key, n, -20, 19); ok {
		j.Limits.Nice = &v
		d.needsRoot(n, v < d.own().nice, "nice: %d is below the supervisor's own nice (%d)", v, d.own().nice)
	}
}

// oomScoreAdj decodes how readily the OOM killer picks the run.
func (d *decoder) oomScoreAdj(j *Job, n *yaml.Node, key string) {
	if v, ok := d.intIn(key, n, -1000, 1000); ok {
		j.Limits.OOMScoreAdj = &v
		d.needsRoot(n, v < d.own().oom, "oom_score_adj: %d is below the supervisor's own (%d)", v, d.own().oom)
	}
}

// tasksMax decodes the run's cgroup pids.max.
func (d *decoder) tasksMax(j *Job, n *yaml.Node, key string) {
	if v, ok := d.positiveInt(key, n); ok {
		j.Limits.TasksMax = int64(v)
	}
}

// intIn decodes a whole number from lo to hi.
func (d *decoder) intIn(key string, n *yaml.Node, lo, hi int) (int, bool) {
	rn := resolve(n)
	v, err := strconv.Atoi(rn.Value)
	if rn.Kind != yaml.ScalarNode || rn.ShortTag() != "!!int" || err != nil {
		d.errorf(n, "%s: expected a whole number from %d to %d, found %s", key, lo, hi, describe(n))
		return 0, false
	}
	if v < lo || v > hi {
		d.errorf(n, "%s: %d is outside %d..%d", key, v, lo, hi)
		return 0, false
	}
	return v, true
}

// ionice decodes idle, best-effort[:N] or realtime:N into IOPrio's
// canonical form: "best-effort" alone is level 4, the kernel's default.
func (d *decoder) ionice(l *Limits, n *yaml.Node) {
	s, ok := d.text("ionice", n)
	if !ok {
		return
	}
	class, level, hasLevel := strings.Cut(s, ":")
	switch {
	case class == "idle" && !hasLevel:
		l.IONice = "idle"
		return
	case class == "best-effort" && !hasLevel:
		l.IONice = "best-effort:4"
		return
	case (class == "best-effort" || class == "realtime") && len(level) == 1 && '0' <= level[0] && level[0] <= '7':
		l.IONice = class + ":" + level
		d.needsRoot(n, class == "realtime", "ionice: the realtime class")
		return
	}
	d.errorf(n, "ionice: %q is not one of idle, best-effort:N or realtime:N (N 0..7)", s)
}

// rlimit decodes nofile and nproc (a count) and core (a size), each also
// unlimited.
func (d *decoder) rlimit(key string, n *yaml.Node) (uint64, bool) {
	var v uint64
	if rn := resolve(n); rn.Kind == yaml.ScalarNode && rn.Value == "unlimited" {
		v = Unlimited
	} else if key == "core" {
		size, ok := d.memSizeOrZero(key, n)
		if !ok {
			return 0, false
		}
		v = uint64(size)
	} else {
		count, ok := d.positiveInt(key, n)
		if !ok {
			return 0, false
		}
		v = uint64(count)
	}
	if no := d.own().nrOpen; key == "nofile" && v != Unlimited && v > no {
		d.errorf(n, "nofile: %d is over the kernel's fs.nr_open (%d), which no process may exceed", v, no)
		return 0, false
	}
	own := d.own().rlimits[key]
	d.needsRoot(n, own != Unlimited && v > own, "%s: %s is above the supervisor's hard limit (%s)", key, rlimitText(v), rlimitText(own))
	return v, true
}

func rlimitText(v uint64) string {
	if v == Unlimited {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10)
}

// needsRoot reports what only a root supervisor may set: the kernel
// refuses it to others, and every run would fail to start.
func (d *decoder) needsRoot(n *yaml.Node, cond bool, format string, args ...any) {
	if !cond || d.euid == 0 {
		return
	}
	d.errorf(n, format+"; only a root supervisor may set it (cronvisor runs as uid %d)", append(args, d.euid)...)
}

// ownLimits are the supervisor's own settings the limit keys are judged
// against: what a run inherits, and may go above (nice), or below
// (oom_score_adj, rlimits) without privilege.
type ownLimits struct {
	nice, oom int
	rlimits   map[string]uint64 // hard limits by job key
	nrOpen    uint64
}

// own reads this process's settings once, and only for a file that sets a
// limit.
func (d *decoder) own() *ownLimits {
	if d.self != nil {
		return d.self
	}
	o := &ownLimits{rlimits: map[string]uint64{}, nrOpen: 1 << 20}
	if prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0); err == nil {
		o.nice = 20 - prio // the raw syscall returns 20-nice
	}
	if b, err := os.ReadFile("/proc/self/oom_score_adj"); err == nil {
		o.oom, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			o.nrOpen = v
		}
	}
	for k, res := range map[string]int{"nofile": unix.RLIMIT_NOFILE, "nproc": unix.RLIMIT_NPROC, "core": unix.RLIMIT_CORE} {
		var rl unix.Rlimit
		o.rlimits[k] = Unlimited
		if unix.Getrlimit(res, &rl) == nil {
			o.rlimits[k] = rl.Max
		}
	}
	d.self = o
	return o
}

// memPattern is a size as systemd's MemoryMax= takes it: bytes, or a
// number (decimals allowed) with K, M, G or T, each 1024 times the last.
// KiB, MiB, GiB and TiB are accepted as the same.
var memPattern = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*(?:([KMGT])(?:iB)?)?$`)

var memUnits = map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

// memSize decodes a size greater than zero.
func (d *decoder) memSize(key string, n *yaml.Node) (int64, bool) {
	v, ok := d.memSizeOrZero(key, n)
	if ok && v == 0 {
		d.errorf(n, "%s: must be greater than 0", key)
		return 0, false
	}
	return v, ok
}

func (d *decoder) memSizeOrZero(key string, n *yaml.Node) (int64, bool) {
	rn := resolve(n)
	var m []string
	if rn.Kind == yaml.ScalarNode && !isNull(rn) {
		m = memPattern.FindStringSubmatch(strings.TrimSpace(rn.Value))
	}
	if m == nil {
		d.errorf(n, "%s: expected a size like 512M, 2G (K, M, G, T: base 1024) or a number of bytes, found %s", key, describe(n))
		return 0, false
	}
	if !strings.Contains(m[1], ".") { // exact, past float64's 53 bits
		v, err := strconv.ParseInt(m[1], 10, 64)
		if u := int64(memUnits[m[2]]); err == nil && v <= (1<<62)/u {
			return v * u, true
		}
	} else if f, err := strconv.ParseFloat(m[1], 64); err == nil && f*memUnits[m[2]] < 1<<62 {
		return int64(math.Round(f * memUnits[m[2]])), true
	}
	d.errorf(n, "%s: %s is too large", key, rn.Value)
	return 0, false
}

// cpuMax decodes cores (0.5, 2) or a percentage of one core (50%, as
// systemd's CPUQuota=), at least 1% (cpu.max's smallest quota).
func (d *decoder) cpuMax(n *yaml.Node) float64 {
	rn := resolve(n)
	s, pct := strings.CutSuffix(strings.TrimSpace(rn.Value), "%")
	v, err := strconv.ParseFloat(s, 64)
	if rn.Kind != yaml.ScalarNode || isNull(rn) || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errorf(n, "cpu_max: expected cores (0.5, 2) or a percentage of one core (50%%), found %s", describe(n))
		return 0
	}
	if pct {
		v /= 100
	}
	if v < 0.01 {
		d.errorf(n, "cpu_max: %s is below 1%% of a core, the least cpu.max can give", rn.Value)
		return 0
	}
	return v
}
