package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runAsScript prints who the run is and what fd 3 is, then holds the run
// open long enough for the test to see its lock held.
const runAsScript = `echo "uid=$(id -u) gid=$(id -g) groups=$(id -G) home=$HOME user=$USER logname=$LOGNAME fd3=$(readlink /proc/self/fd/3)"; sleep 1.5`

// throwawayGroup creates a local group (or reuses it) and deletes it when
// the test ends; register it before the users in it, so that it is
// deleted after them.
func throwawayGroup(t *testing.T, name string) {
	t.Helper()
	if _, err := user.LookupGroup(name); err != nil {
		if out, err := exec.Command("groupadd", "--system", name).CombinedOutput(); err != nil {
			t.Fatalf("groupadd %s: %v: %s", name, err, out)
		}
	}
	t.Cleanup(func() {
		if out, err := exec.Command("groupdel", name).CombinedOutput(); err != nil {
			t.Errorf("groupdel %s: %v: %s", name, err, out)
		}
	})
}

// TestE2ERunAsUser: a root supervisor runs a job with user: nobody, and
// one with a user the test creates (with a supplementary group), with that
// uid, gid and groups, cron's HOME, USER and LOGNAME, and the lock file as
// fd 3, held while the run lives.
func TestE2ERunAsUser(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	throwawayGroup(t, "cvrunas-extra")
	throwawayUser(t, "cvrunas-user")
	if out, err := exec.Command("usermod", "-a", "-G", "cvrunas-extra", "cvrunas-user").CombinedOutput(); err != nil {
		t.Fatalf("usermod: %v: %s", err, out)
	}
	extra, err := user.LookupGroup("cvrunas-extra")
	if err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, `defaults:
  timeout: 20s
  dir: /
jobs:
  - name: as_nobody
    schedule: "@hourly"
    user: nobody
    command: '`+runAsScript+`'
  - name: as_created
    schedule: "@hourly"
    user: cvrunas-user
    command: '`+runAsScript+`'
`)
	for _, c := range []struct{ job, user string }{{"as_nobody", "nobody"}, {"as_created", "cvrunas-user"}} {
		t.Run(c.job, func(t *testing.T) {
			u, err := user.Lookup(c.user)
			if err != nil {
				t.Fatal(err)
			}
			gids, err := u.GroupIds()
			if err != nil {
				t.Fatal(err)
			}
			lockFile := filepath.Join(s.state, "locks", c.job+".lock")
			p := s.cv("run", c.job)
			waitFor(t, 10*time.Second, "the run to hold its lock", func() bool { return lockHeld(lockFile) })
			if code := p.wait(20 * time.Second); code != 0 {
				t.Fatalf("run %s: exit %d, stderr %s", c.job, code, p.stderr())
			}
			got := p.stdout()
			t.Logf("the job printed: %s", got)
			want := fmt.Sprintf("uid=%s gid=%s ", u.Uid, u.Gid)
			if !strings.HasPrefix(got, want) {
				t.Errorf("the job ran as %q, want %q", got, want)
			}
			if g := groupsIn(got); !slices.Equal(g, sortedSet(append(gids, u.Gid))) {
				t.Errorf("groups %v, want %v (the user's from the group database)", g, sortedSet(append(gids, u.Gid)))
			}
			if c.user == "cvrunas-user" && !slices.Contains(groupsIn(got), extra.Gid) {
				t.Errorf("groups %v lack the user's supplementary group %s", groupsIn(got), extra.Gid)
			}
			for _, w := range []string{"home=" + u.HomeDir + " ", "user=" + c.user + " ", "logname=" + c.user + " ", "fd3=" + lockFile} {
				if !strings.Contains(got, w) {
					t.Errorf("the job's line %q lacks %q", got, w)
				}
			}
		})
	}
}

// lockHeld reports whether another open file description holds the flock.
func lockHeld(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) // our own probe's lock, on our own descriptor
	return false
}

// groupsIn is the groups=... list of the job's line, as a sorted set.
func groupsIn(line string) []string {
	_, rest, _ := strings.Cut(line, "groups=")
	rest, _, _ = strings.Cut(rest, " home=")
	return sortedSet(strings.Fields(rest))
}

func sortedSet(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// TestE2ENonRootRefusesUser: a supervisor that is not root refuses a file
// with user: root at load, naming the file, line and column: `run`, the
// daemon's start and its reload.
func TestE2ENonRootRefusesUser(t *testing.T) {
	cred := throwawayUser(t, "cvrunas-nonroot")
	s := newSandbox(t, `jobs:
  - name: as_root
    schedule: "@hourly"
    timeout: 5s
    user: root
    command: id -u
`)
	bin := s.public(cvBin, "cronvisor")
	if err := os.Mkdir(s.state, 0o700); err != nil {
		t.Fatal(err)
	}
	mustChown(t, s.state, cred)
	other := s.as(cred)
	want := s.config + ":6:11: user: only a root supervisor can run a job as another user; cronvisor runs as uid " +
		fmt.Sprintf("%d (cvrunas-nonroot)", cred.Uid)
	for _, args := range [][]string{{"run", "as_root"}, {"daemon"}, {"validate"}} {
		code, stdout, stderr := other.runUser(bin, args...)
		if code != 1 || !strings.Contains(stdout+stderr, want) {
			t.Errorf("%v as a non-root user: exit %d, stdout %q, stderr %q; want 1 and %q", args, code, stdout, stderr, want)
		}
		if strings.Contains(stdout, "0\n") {
			t.Errorf("%v: the job ran: %q", args, stdout)
		}
	}

	// A daemon started on a file without user: refuses a reload that adds
	// it (noticed on disk), and keeps running.
	valid := strings.Replace(readFile(t, s.config), "    user: root\n", "", 1)
	if err := os.WriteFile(s.config, []byte(valid), 0o644); err != nil {
		t.Fatal(err)
	}
	d := other.startEnv(nil, bin, "--config", s.config, "daemon", "--log-format", "text")
	waitFor(t, 15*time.Second, "the daemon to start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	if err := os.WriteFile(s.config, []byte(strings.Replace(valid, "    command:", "    user: root\n    command:", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the reload to be refused", func() bool {
		return strings.Contains(d.stderr(), "reload refused") && strings.Contains(d.stderr(), "only a root supervisor")
	})
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(15 * time.Second); code != 0 {
		t.Errorf("daemon exit %d after SIGTERM: %s", code, d.stderr())
	}
}
