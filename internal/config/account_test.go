package config

import (
	"os/user"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// runAsFile is a file with one job whose last lines are extra.
func runAsFile(extra ...string) []byte {
	return []byte(y(append([]string{"jobs:", "  - name: a", "    schedule: '@hourly'", "    command: id",
		"    timeout: 1m"}, extra...)...))
}

// nobody is the nobody account as the user database has it.
func nobody(t *testing.T) Account {
	t.Helper()
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("this test needs the user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	a := Account{User: "nobody", Home: u.HomeDir, UID: uint32(uid), GID: uint32(gid)}
	gids, err := u.GroupIds()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gids {
		id, _ := strconv.Atoi(g)
		a.Groups = append(a.Groups, uint32(id))
	}
	return a
}

func TestRunAs(t *testing.T) {
	nb := nobody(t)
	rootGroup := nb
	rootGroup.GID = 0
	groupOnly := Account{UID: 0, GID: nb.GID}
	cases := []struct {
		name  string
		extra []string
		want  *Account
	}{
		{"none", nil, nil},
		{"by name", []string{"    user: nobody"}, &nb},
		{"by id", []string{"    user: " + strconv.Itoa(int(nb.UID))}, &nb},
		{"with a group", []string{"    user: nobody", "    group: root"}, &rootGroup},
		{"group only", []string{"    group: " + strconv.Itoa(int(nb.GID))}, &groupOnly},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, ps := ParseAs("jobs.yaml", runAsFile(c.extra...), 0, 0)
			if cfg == nil {
				t.Fatalf("problems:\n%s", lines(ps))
			}
			if got := cfg.Jobs[0].RunAs; !reflect.DeepEqual(got, c.want) {
				t.Errorf("RunAs = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestRunAsFromDefaults(t *testing.T) {
	src := y("defaults:", "  timeout: 1m", "  user: nobody", "jobs:",
		"  - {name: a, schedule: '@hourly', command: id}",
		"  - {name: b, schedule: '@hourly', command: id, user: root}")
	cfg, ps := ParseAs("jobs.yaml", []byte(src), 0, 0)
	if cfg == nil {
		t.Fatalf("problems:\n%s", lines(ps))
	}
	if a, b := cfg.Jobs[0].RunAs, cfg.Jobs[1].RunAs; a == nil || a.User != "nobody" || b == nil || b.User != "root" {
		t.Errorf("RunAs = %+v, %+v; want nobody, root", a, b)
	}
}

func TestRunAsErrors(t *testing.T) {
	nb := nobody(t)
	cases := []struct {
		name       string
		extra      []string
		euid, egid int
		at, msg    string
	}{
		{"unknown user", []string{"    user: no-such-user-here"}, 0, 0, "6:11", `no user "no-such-user-here" on this machine`},
		{"unknown uid", []string{"    user: 4000000000"}, 0, 0, "6:11", `no user "4000000000"`},
		{"unknown group", []string{"    group: no-such-group-here"}, 0, 0, "6:12", `no group "no-such-group-here"`},
		{"not text", []string{"    user: [a]"}, 0, 0, "6:11", "user: expected"},
		{"non-root switching user", []string{"    user: root"}, 4242, 4242, "6:11",
			"only a root supervisor can run a job as another user; cronvisor runs as uid 4242"},
		{"non-root switching group", []string{"    group: root"}, 4242, 4242, "6:12",
			"only a root supervisor can run a job as another group"},
		{"non-root whose user's group differs", []string{"    user: nobody"}, int(nb.UID), 4242, "6:11",
			"is not cronvisor's own (gid 4242)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, ps := ParseAs("jobs.yaml", runAsFile(c.extra...), c.euid, c.egid)
			errs := Errors(ps)
			if cfg != nil || len(errs) != 1 {
				t.Fatalf("want one error, got cfg=%v problems:\n%s", cfg != nil, lines(ps))
			}
			if at(errs[0]) != c.at || !strings.Contains(errs[0].Message, c.msg) {
				t.Errorf("got %s: %s; want %s: ...%s...", at(errs[0]), errs[0].Message, c.at, c.msg)
			}
		})
	}
}

// A non-root supervisor may name itself: nothing is switched.
func TestRunAsSelfWithoutRoot(t *testing.T) {
	nb := nobody(t)
	cfg, ps := ParseAs("jobs.yaml", runAsFile("    user: nobody"), int(nb.UID), int(nb.GID))
	if cfg == nil {
		t.Fatalf("problems:\n%s", lines(ps))
	}
	if got := cfg.Jobs[0].RunAs; got == nil || got.UID != nb.UID {
		t.Errorf("RunAs = %+v", got)
	}
}
