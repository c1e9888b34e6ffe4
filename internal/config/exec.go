package config

import (
	"encoding/binary"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// reservedEnv are set by cronvisor for every run; a job may not override them.
var reservedEnv = []string{"CRONVISOR_JOB", "CRONVISOR_RUN_ID", "CRONVISOR_SCHEDULED_AT",
	"CRONVISOR_DEADLINE", "CRONVISOR_LAST_OK_SLOT", "CRONVISOR_RESOURCES"}

// command decodes a string (run as Shell -c STRING, like a crontab line) or
// a list (exec'd as argv, no shell quoting to get wrong).
func (d *decoder) command(j *Job, n *yaml.Node) {
	rn := resolve(n)
	switch {
	case rn.Kind == yaml.ScalarNode && !isNull(rn):
		if strings.TrimSpace(rn.Value) == "" {
			d.errorf(n, "command is empty")
			return
		}
		if !d.argument(n, rn.Value) {
			return
		}
		j.Command = d.argv(append(d.args[:0], j.Shell, "-c", rn.Value))
	case rn.Kind == yaml.SequenceNode && len(rn.Content) > 0:
		args := d.args[:0]
		for _, item := range rn.Content {
			ri := resolve(item)
			if ri.Kind != yaml.ScalarNode || isNull(ri) {
				d.errorf(item, "command: each argument must be a string, found %s", describe(item))
				return
			}
			if !d.argument(item, ri.Value) {
				return
			}
			args = append(args, ri.Value)
		}
		if strings.TrimSpace(args[0]) == "" {
			d.errorf(rn.Content[0], "command: the program (the first item) is empty")
			return
		}
		j.Command = d.argv(args)
	case rn.Kind == yaml.SequenceNode:
		d.errorf(n, "command: the list is empty")
	default:
		d.errorf(n, "command: expected a string or a list of strings, found %s", describe(n))
	}
}

// argv returns a copy of args that jobs with the same arguments share
// (Job.Command is read-only): 10,000 jobs running one command hold it
// once. args may be d.args, the scratch it is built in.
func (d *decoder) argv(args []string) []string {
	d.args = args[:0]
	d.key = d.key[:0]
	for _, a := range args {
		d.key = appendString(d.key, a)
	}
	if argv, ok := d.argvs[string(d.key)]; ok {
		return argv
	}
	argv := make([]string, len(args)) // no spare capacity to append into
	copy(argv, args)
	d.argvs[string(d.key)] = argv
	return argv
}

// appendString appends s to a key that holds several strings.
func appendString(key []byte, s string) []byte {
	return append(binary.AppendUvarint(key, uint64(len(s))), s...)
}

// envKey names the nodes a job's env is decoded from: its env, and base,
// the env of defaults that it extends when the job has its own.
type envKey struct{ base, env *yaml.Node }

// parsedEnv is a decoded env and the merge budget its decoding took.
type parsedEnv struct {
	vars  map[string]string
	spent int
}

// jobEnv decodes env on top of base (nil for none). Jobs with equal envs
// share one map (Job.Env is read-only): 10,000 jobs that take the env of
// defaults hold it once. Jobs with the same nodes are not even decoded
// again: that would report nothing new, since tidy drops repeats, and
// would take the same merge budget, which is charged here; when not
// enough of it is left the env is decoded again to fail as it would have.
func (d *decoder) jobEnv(base, env *yaml.Node) map[string]string {
	key := envKey{base, env}
	if p, ok := d.envs[key]; ok && d.budget >= p.spent {
		d.budget -= p.spent
		return p.vars
	}
	budget := d.budget
	var vars map[string]string
	if base != nil {
		vars = d.env(vars, base)
	}
	vars = d.sameVars(d.env(vars, env))
	if d.budget >= 0 {
		d.envs[key] = parsedEnv{vars, budget - d.budget}
	}
	return vars
}

// sameVars returns the first map with the contents of vars it was given,
// or vars itself.
func (d *decoder) sameVars(vars map[string]string) map[string]string {
	if vars == nil {
		return nil
	}
	names := d.args[:0]
	for k := range vars {
		names = append(names, k)
	}
	slices.Sort(names)
	d.key = d.key[:0]
	for _, k := range names {
		d.key = appendString(appendString(d.key, k), vars[k])
	}
	d.args = names[:0]
	if same, ok := d.varsByContent[string(d.key)]; ok {
		return same
	}
	d.varsByContent[string(d.key)] = vars
	return vars
}

// env decodes NAME: value pairs into vars, on top of what is there, and
// returns vars, made if it was nil. Numbers and booleans are taken as
// written: PORT: 8080 means "8080".
func (d *decoder) env(vars map[string]string, n *yaml.Node) map[string]string {
	rn := resolve(n)
	if isNull(rn) {
		return vars
	}
	if rn.Kind != yaml.MappingNode {
		d.errorf(n, "env: expected a mapping of NAME: value, found %s", describe(n))
		return vars
	}
	if vars == nil {
		vars = make(map[string]string)
	}
	for _, e := range d.entries(rn, 0) {
		v := resolve(e.val)
		switch {
		case !validEnvName(e.name):
			d.errorf(e.key, "env: %q is not a valid variable name", e.name)
		case slices.Contains(reservedEnv, e.name):
			d.errorf(e.key, "env: %s is set by cronvisor for each run", e.name)
		case isNull(v):
			d.errorf(e.val, `env %s has no value; write %s: "" for an empty one`, e.name, e.name)
		case v.Kind != yaml.ScalarNode:
			d.errorf(e.val, "env %s: expected a string, found %s", e.name, describe(e.val))
		case !d.envValue(e, v):
		default:
			vars[e.name] = v.Value
		}
	}
	return vars
}

func validEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return s != "" && (s[0] < '0' || s[0] > '9')
}
