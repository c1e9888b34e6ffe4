package proc

import (
	"strconv"
	"strings"
	"time"
)

// keeperFlags are a keeper's arguments (see keeperArgs).
type keeperFlags struct {
	tag, end, log    string
	logLimit         int64
	noSync           bool
	cgroup           string
	grace            time.Duration
	atOnce, session  bool
	lease            bool
	within           time.Duration
	timeout          time.Duration
	deadline         time.Time
	lock             bool
	beats            bool          // the run's heartbeat pipe is handed, last
	heartbeatTimeout time.Duration // 0: beats are not awaited
	run              KeptRun
}

// keeperFlag is one argument of a hand-over: whether it is a switch
// (no value) and how its value is set.
type keeperFlag struct {
	isSwitch bool
	set      func(f *keeperFlags, v string) error
}

// keeperFlagTable is every argument keeperArgs writes. A hand-over is
// parsed with it, once per run: a flag.FlagSet built for each was a
// tenth of a keeper's work.
var keeperFlagTable = map[string]keeperFlag{
	"tag":               {set: func(f *keeperFlags, v string) error { f.tag = v; return nil }},
	"grace":             {set: func(f *keeperFlags, v string) (err error) { f.grace, err = time.ParseDuration(v); return }},
	"at-once":           {isSwitch: true, set: func(f *keeperFlags, v string) (err error) { f.atOnce, err = strconv.ParseBool(v); return }},
	"session":           {isSwitch: true, set: func(f *keeperFlags, v string) (err error) { f.session, err = strconv.ParseBool(v); return }},
	"lease":             {isSwitch: true, set: func(f *keeperFlags, v string) (err error) { f.lease, err = strconv.ParseBool(v); return }},
	"within":            {set: func(f *keeperFlags, v string) (err error) { f.within, err = time.ParseDuration(v); return }},
	"deadline":          {set: func(f *keeperFlags, v string) (err error) { f.deadline, err = time.Parse(time.RFC3339Nano, v); return }},
	"timeout":           {set: func(f *keeperFlags, v string) (err error) { f.timeout, err = time.ParseDuration(v); return }},
	"end":               {set: func(f *keeperFlags, v string) error { f.end = v; return nil }},
	"no-sync":           {isSwitch: true, set: func(f *keeperFlags, v string) (err error) { f.noSync, err = strconv.ParseBool(v); return }},
	"log":               {set: func(f *keeperFlags, v string) error { f.log = v; return nil }},
	"log-limit":         {set: func(f *keeperFlags, v string) (err error) { f.logLimit, err = strconv.ParseInt(v, 0, 64); return }},
	"lock":              {isSwitch: true, set: func(f *keeperFlags, v string) (err error) { f.lock, err = strconv.ParseBool(v); return }},
	"cgroup":            {set: func(f *keeperFlags, v string) error { f.cgroup = v; return nil }},
	"beats":             {isSwitch: true, set: func(f *keeperFlags, v string) (err error) { f.beats, err = strconv.ParseBool(v); return }},
	"heartbeat-timeout": {set: func(f *keeperFlags, v string) (err error) { f.heartbeatTimeout, err = time.ParseDuration(v); return }},
	"job":               {set: func(f *keeperFlags, v string) error { f.run.Job = v; return nil }},
	"supervisor":        {set: func(f *keeperFlags, v string) (err error) { f.run.SupervisorPID, err = strconv.Atoi(v); return }},
	"slot":              {set: func(f *keeperFlags, v string) (err error) { f.run.Slot, err = time.Parse(time.RFC3339Nano, v); return }},
	"attempt":           {set: func(f *keeperFlags, v string) (err error) { f.run.Attempt, err = strconv.Atoi(v); return }},
	"manual":            {isSwitch: true, set: func(f *keeperFlags, v string) (err error) { f.run.Manual, err = strconv.ParseBool(v); return }},
}

// parseKeeperFlags reads a hand-over's arguments as the flag package
// would: "-name value" or "-name=value", a switch as "-name" (or
// "-name=BOOL"), one or two dashes; false for an unknown name, a missing
// or malformed value, or an argument that is no flag.
func parseKeeperFlags(args []string) (keeperFlags, bool) {
	var f keeperFlags
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, ok := strings.CutPrefix(a, "-")
		if !ok || name == "" || name == "-" {
			return f, false
		}
		name = strings.TrimPrefix(name, "-")
		name, value, hasValue := strings.Cut(name, "=")
		kf, known := keeperFlagTable[name]
		switch {
		case !known || name == "":
			return f, false
		case kf.isSwitch && !hasValue:
			value = "true"
		case !hasValue:
			if i+1 == len(args) {
				return f, false
			}
			i++
			value = args[i]
		}
		if kf.set(&f, value) != nil {
			return f, false
		}
	}
	return f, true
}
