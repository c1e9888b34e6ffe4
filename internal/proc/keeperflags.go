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
	exitSlot         exitSlotRef   // a deferred run's slot in the exitTable
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
	"tag":               arg(text, func(f *keeperFlags) *string { return &f.tag }),
	"grace":             arg(time.ParseDuration, func(f *keeperFlags) *time.Duration { return &f.grace }),
	"at-once":           switchArg(func(f *keeperFlags) *bool { return &f.atOnce }),
	"session":           switchArg(func(f *keeperFlags) *bool { return &f.session }),
	"lease":             switchArg(func(f *keeperFlags) *bool { return &f.lease }),
	"within":            arg(time.ParseDuration, func(f *keeperFlags) *time.Duration { return &f.within }),
	"deadline":          arg(rfc3339, func(f *keeperFlags) *time.Time { return &f.deadline }),
	"timeout":           arg(time.ParseDuration, func(f *keeperFlags) *time.Duration { return &f.timeout }),
	"end":               arg(text, func(f *keeperFlags) *string { return &f.end }),
	"no-sync":           switchArg(func(f *keeperFlags) *bool { return &f.noSync }),
	"log":               arg(text, func(f *keeperFlags) *string { return &f.log }),
	"log-limit":         arg(int64Of, func(f *keeperFlags) *int64 { return &f.logLimit }),
	"lock":              switchArg(func(f *keeperFlags) *bool { return &f.lock }),
	"cgroup":            arg(text, func(f *keeperFlags) *string { return &f.cgroup }),
	"beats":             switchArg(func(f *keeperFlags) *bool { return &f.beats }),
	"heartbeat-timeout": arg(time.ParseDuration, func(f *keeperFlags) *time.Duration { return &f.heartbeatTimeout }),
	"job":               arg(text, func(f *keeperFlags) *string { return &f.run.Job }),
	"supervisor":        arg(strconv.Atoi, func(f *keeperFlags) *int { return &f.run.SupervisorPID }),
	"slot":              arg(rfc3339, func(f *keeperFlags) *time.Time { return &f.run.Slot }),
	"attempt":           arg(strconv.Atoi, func(f *keeperFlags) *int { return &f.run.Attempt }),
	"manual":            switchArg(func(f *keeperFlags) *bool { return &f.run.Manual }),
	"exit-slot":         arg(parseExitSlot, func(f *keeperFlags) *exitSlotRef { return &f.exitSlot }),
}

// arg is an argument with a value, read by parse into field.
func arg[T any](parse func(string) (T, error), field func(*keeperFlags) *T) keeperFlag {
	return keeperFlag{set: func(f *keeperFlags, v string) error {
		x, err := parse(v)
		if err == nil {
			*field(f) = x
		}
		return err
	}}
}

// switchArg is a switch: "-name" alone sets it, "-name=BOOL" says which.
func switchArg(field func(*keeperFlags) *bool) keeperFlag {
	k := arg(strconv.ParseBool, field)
	k.isSwitch = true
	return k
}

func text(v string) (string, error)       { return v, nil }
func int64Of(v string) (int64, error)     { return strconv.ParseInt(v, 0, 64) }
func rfc3339(v string) (time.Time, error) { return time.Parse(time.RFC3339Nano, v) }

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
		case !known:
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
