package crontab

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// Header comments of the generated defaults: why they are what they are.
const (
	timeoutNote = "cron has no timeout: set one (timeout: 30m) so that a stuck run cannot hold its lock for ever"
	overlapNote = "cron starts a job while its last run goes on; cronvisor skips such a fire (overlap: skip, the default)"
)

// Document renders a translation as a whole jobs.yaml: what every job
// shares in defaults, the rest per job, each under the crontab comments
// that were above its line and the line itself. source names the crontab.
func Document(res Result, source string) []byte {
	defs, common := shared(res.Jobs)
	root := mapping()
	head := []string{"Imported from " + source + " by cronvisor import crontab."}
	if res.UserCrontab {
		head = append(head, "cron starts a user crontab's jobs in its owner's home; these run in jobs.yaml's",
			"directory unless they say dir: (and as the supervisor's user unless they say user:).")
	}
	root.HeadComment = comment(head...)
	add(root, "defaults", defs, "")
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, j := range res.Jobs {
		seq.Content = append(seq.Content, jobNode(j, common))
	}
	add(root, "jobs", seq, "")
	if len(res.Tail) > 0 {
		root.FootComment = comment(res.Tail...)
	}
	return encode(root)
}

// JobNodes renders the jobs alone, each with every setting of its own
// (timeout: none included), to be added to an existing file's jobs.
func JobNodes(res Result) []*yaml.Node {
	var out []*yaml.Node
	for _, j := range res.Jobs {
		n := jobNode(j, Job{})
		if j.Timeout == "none" {
			add(n, "timeout", scalar("none"), timeoutNote)
		}
		out = append(out, n)
	}
	return out
}

// shared returns the defaults block and the values it holds: a value
// every job has alike is written once there.
func shared(jobs []Job) (*yaml.Node, Job) {
	var c Job
	if len(jobs) > 0 {
		c = jobs[0]
		c.Env = nil
		for _, j := range jobs[1:] {
			c.Timezone = same(c.Timezone, j.Timezone)
			c.Shell = same(c.Shell, j.Shell)
			c.Dir = same(c.Dir, j.Dir)
			c.User = same(c.User, j.User)
			c.Jitter = same(c.Jitter, j.Jitter)
		}
	first:
		for _, v := range jobs[0].Env {
			for _, j := range jobs[1:] {
				if val, ok := lookupVar(j.Env, v.Name); !ok || val != v.Value {
					continue first
				}
			}
			c.Env = append(c.Env, v)
		}
	}
	d := mapping()
	add(d, "timeout", scalar("none"), timeoutNote)
	d.Content[0].HeadComment += "\n" + overlapNote
	for _, kv := range [][2]string{{"timezone", c.Timezone}, {"user", c.User}, {"dir", c.Dir}, {"shell", c.Shell}, {"jitter", c.Jitter}} {
		if kv[1] != "" {
			add(d, kv[0], scalar(kv[1]), "")
		}
	}
	if len(c.Env) > 0 {
		add(d, "env", envNode(c.Env), "")
	}
	return d, c
}

func same(a, b string) string {
	if a == b {
		return a
	}
	return ""
}

func lookupVar(vs []Var, name string) (string, bool) {
	for _, v := range vs {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

// jobNode renders j without what common (the defaults) already says.
func jobNode(j Job, common Job) *yaml.Node {
	n := mapping()
	head := append([]string{}, j.Comments...)
	head = append(head, "crontab line "+itoa(j.Line)+": "+j.Text)
	for _, note := range j.Notes {
		head = append(head, "note: "+note)
	}
	n.HeadComment = comment(head...)
	add(n, "name", scalar(j.Name), "")
	add(n, "schedule", scalar(j.Schedule), "")
	for _, kv := range [][3]string{
		{"timezone", j.Timezone, common.Timezone}, {"user", j.User, common.User},
		{"dir", j.Dir, common.Dir}, {"shell", j.Shell, common.Shell}, {"jitter", j.Jitter, common.Jitter},
	} {
		if kv[1] != "" && kv[1] != kv[2] {
			add(n, kv[0], scalar(kv[1]), "")
		}
	}
	var env []Var
	for _, v := range j.Env {
		if val, ok := lookupVar(common.Env, v.Name); !ok || val != v.Value {
			env = append(env, v)
		}
	}
	if len(env) > 0 {
		add(n, "env", envNode(env), "")
	}
	cmd := scalar(j.Command)
	if strings.Contains(j.Command, "\n") {
		cmd.Style = yaml.LiteralStyle
	}
	add(n, "command", cmd, "")
	if j.Ping != "" {
		add(n, "ping", scalar(j.Ping), "")
	}
	if j.Timeout != "none" {
		add(n, "timeout", scalar(j.Timeout), "")
	}
	if j.KillGrace != "" {
		add(n, "kill_grace", scalar(j.KillGrace), "")
	}
	if j.Overlap != "" {
		add(n, "overlap", scalar(j.Overlap), "")
		n.Content[len(n.Content)-1].LineComment = comment("was flock on " + j.LockFile + "; programs taking that file are not excluded now")
	}
	if j.Lock != "" {
		add(n, "lock", scalar(j.Lock), "")
	}
	return n
}

func envNode(vs []Var) *yaml.Node {
	m := mapping()
	for _, v := range vs {
		add(m, v.Name, scalar(v.Value), "")
	}
	return m
}

// comment joins lines into a YAML comment. A control character or a
// Unicode line break in a crontab line would end the comment (or be
// refused by YAML), so it is written escaped, as Go would quote it.
func comment(lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, r := range l {
			switch {
			case r == '\t':
				b.WriteRune(r)
			case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\ufeff':
				q := strconv.QuoteRune(r)
				b.WriteString(q[1 : len(q)-1])
			default:
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func scalar(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

func add(m *yaml.Node, key string, val *yaml.Node, note string) {
	k := scalar(key)
	k.HeadComment = note
	m.Content = append(m.Content, k, val)
}

func encode(n *yaml.Node) []byte {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	_ = e.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{n}}) // nodes built here always encode
	_ = e.Close()
	return b.Bytes()
}

// Report writes the problems, one "LINE: why" per line.
func Report(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(itoa(p.Line) + ": " + p.Why + "\n")
	}
	return b.String()
}
