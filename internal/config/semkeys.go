package config

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The keys of resources: (counting semaphores, docs/resources.md), not to
// be confused with the resource limits of resourcekeys.go.

// MaxResourceSlots bounds a resource's size: each slot is a lock of its
// own, and a resource of thousands is no limit worth one.
const MaxResourceSlots = 1000

// DefaultMaxWait is max_wait with on_full: wait and no max_wait.
const DefaultMaxWait = time.Minute

// resourcesKey decodes the top-level resources: name -> slots. The jobs
// are decoded after it, so that uses can check names and weights.
func (d *decoder) resourcesKey(cfg *Config, e entry) {
	rn := resolve(e.val)
	if isNull(rn) {
		return
	}
	if rn.Kind != yaml.MappingNode {
		d.errorf(e.val, "resources: expected a mapping of names to numbers of slots (db: 2), found %s", describe(e.val))
		return
	}
	sizes := make(map[string]int)
	d.resourceKeys = make(map[string]*yaml.Node)
	for _, r := range d.entries(rn, 0) {
		name := d.name("resources: name", r.key)
		if !validName(name) || name == "." || name == ".." || len(name) > maxNameLen {
			continue
		}
		if v, ok := d.intIn("resources: "+name, r.val, 1, MaxResourceSlots); ok {
			sizes[name], d.resourceKeys[name] = v, r.key
		}
	}
	cfg.Resources, d.resources = sizes, sizes
}

// uses decodes a job's uses: a list of names (one slot each) or a map of
// names to weights, into Uses sorted by name.
func (d *decoder) uses(j *Job, n *yaml.Node, key string) {
	rn := resolve(n)
	var uses []Use
	switch {
	case isNull(rn):
	case rn.Kind == yaml.SequenceNode:
		for _, item := range rn.Content {
			if u, ok := d.use(key, item, nil, uses); ok {
				uses = append(uses, u)
			}
		}
	case rn.Kind == yaml.MappingNode:
		for _, e := range d.entries(rn, 0) {
			if u, ok := d.use(key, e.key, e.val, uses); ok {
				uses = append(uses, u)
			}
		}
	default:
		d.errorf(n, "%s: expected a list of resources ([db]) or a mapping of resources to weights ({db: 2}), found %s", key, describe(n))
	}
	slices.SortFunc(uses, func(a, b Use) int { return strings.Compare(a.Resource, b.Resource) })
	j.Uses = uses
}

// use decodes one resource of uses, named by name with weight w (nil:
// 1), checked against the declared resources and the uses before it.
func (d *decoder) use(key string, name, w *yaml.Node, before []Use) (Use, bool) {
	s, ok := d.text(key, name)
	if !ok {
		return Use{}, false
	}
	size, declared := d.resources[s]
	switch {
	case !declared:
		d.errorf(name, "%s: resource %q is not declared under resources:", key, s)
		return Use{}, false
	case slices.ContainsFunc(before, func(u Use) bool { return u.Resource == s }):
		d.errorf(name, "%s: %s is listed twice", key, s)
		return Use{}, false
	}
	u := Use{Resource: d.intern(s), Weight: 1}
	if w == nil {
		return u, true
	}
	rw := resolve(w)
	v, err := parseWhole(rw)
	switch {
	case err != nil:
		d.errorf(w, "%s: %s: expected a weight, a whole number of slots, found %s", key, s, describe(w))
		return Use{}, false
	case v < 1:
		d.errorf(w, "%s: %s: weight %d is below 1", key, s, v)
		return Use{}, false
	case v > size:
		d.errorf(w, "%s: %s: weight %d is above its %d slots", key, s, v, size)
		return Use{}, false
	}
	u.Weight = v
	return u, true
}

// onFulls are the OnFull values, so that a job holds a constant rather
// than the string written.
var onFulls = []OnFull{OnFullSkip, OnFullWait}

func (d *decoder) onFull(j *Job, n *yaml.Node, key string) {
	s, ok := d.text(key, n)
	if !ok {
		return
	}
	if i := slices.Index(onFulls, OnFull(s)); i >= 0 {
		j.OnFull = onFulls[i]
		return
	}
	d.errorf(n, "%s: %q is not one of skip, wait", key, s)
}

func (d *decoder) maxWait(j *Job, n *yaml.Node, key string) {
	if v, ok := d.duration(key, n); ok && v <= 0 {
		d.errorf(n, "%s: must be above 0", key)
	} else if ok {
		j.MaxWait = v
	}
}

// waitRule checks max_wait against on_full once both are known. A
// max_wait written in the job itself without on_full: wait is an error:
// it would never be used. One in defaults is the bound of the jobs that
// wait, and is dropped from those that do not. A waiting job without
// one waits DefaultMaxWait.
func (d *decoder) waitRule(j *Job, own *jobFields) {
	switch {
	case j.OnFull == OnFullWait && j.MaxWait == 0:
		j.MaxWait = DefaultMaxWait
	case j.OnFull != OnFullWait && j.MaxWait != 0:
		if e := own[kMaxWait]; e.has() {
			d.errorf(e.val, "max_wait: is used only with on_full: wait")
		}
		j.MaxWait = 0
	}
}

// parseWhole reads an integer scalar.
func parseWhole(rn *yaml.Node) (int, error) {
	if rn.Kind != yaml.ScalarNode || rn.ShortTag() != "!!int" {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(rn.Value)
}

// unusedResources warns of a declared resource that no job uses: a typo
// in a job's uses would be an error, so this is one in resources:.
func (d *decoder) unusedResources(jobs []Job) {
	used := make(map[string]bool, len(d.resources))
	for i := range jobs {
		for _, u := range jobs[i].Uses {
			used[u.Resource] = true
		}
	}
	for name, key := range d.resourceKeys {
		if !used[name] {
			d.warnf(key, "resources: %s is used by no job", name)
		}
	}
}
