package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// SubtreeName is cronvisor's subtree when it runs in the root cgroup (a
// host without systemd, or this machine): a directory of that name under
// the cgroup v2 mount.
const SubtreeName = "cronvisor"

// supervisorName is the child of a delegated cgroup that systemd puts
// the supervisor in with DelegateSubgroup=supervisor, beside the runs'
// leaves, so that controllers can be enabled for them (the kernel's "no
// internal processes" rule, see Detect).
const supervisorName = "supervisor"

// ErrUnusable wraps every reason Detect gives for having no hierarchy.
var ErrUnusable = errors.New("cgroup v2 not usable")

// Hierarchy is cronvisor's subtree of the cgroup v2 hierarchy, where the
// runs' leaves are created. Its values are fixed once Detect returns.
type Hierarchy struct {
	// Mount is where cgroup2 is mounted (/sys/fs/cgroup, or
	// /sys/fs/cgroup/unified on a hybrid host).
	Mount string
	// Root is the subtree's directory: the runs' leaves are its children.
	Root string
	// Controllers are those enabled in Root's cgroup.subtree_control:
	// the ones a run's limits may use.
	Controllers []string
}

// String is how the start-up log and `status` name the containment.
func (h *Hierarchy) String() string { return "cgroup v2 at " + h.Root }

// Detect finds the cgroup v2 mount and this process's cgroup in it, and
// chooses cronvisor's subtree:
//   - in the root cgroup (no systemd, or a host like this one), the
//     directory SubtreeName under the mount, created if absent; the root
//     cgroup is exempt from the kernel's "no internal processes" rule, and
//     the subtree itself never holds a process, so the controllers it is
//     offered are enabled in it;
//   - in a cgroup named "supervisor" (systemd's DelegateSubgroup=supervisor
//     with Delegate=yes), its parent, the unit's delegated cgroup: this
//     process is already beside the runs' leaves, not above them, so the
//     controllers the unit is offered are enabled for them;
//   - elsewhere (Delegate=yes alone, a container, a login session), this
//     process's own cgroup, and nothing is enabled: a cgroup that holds
//     processes cannot enable controllers for its children, and moving
//     this process out of the unit's cgroup would make systemd's next
//     start of the unit fail. Runs are contained; limits need
//     controllers someone else enabled.
//
// The error (wrapping ErrUnusable) says why runs cannot be contained:
// no cgroup2 mount, not writable, no cgroup.kill (Linux < 5.14).
func Detect() (*Hierarchy, error) {
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	defer mi.Close()
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	return detect(mi, string(self))
}

// detect is Detect on the given mountinfo and /proc/self/cgroup.
func detect(mountinfo io.Reader, selfCgroup string) (*Hierarchy, error) {
	mount, err := findMount(mountinfo)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	own, ok := ownCgroup(selfCgroup)
	if !ok {
		return nil, fmt.Errorf("%w: no 0:: line in /proc/self/cgroup", ErrUnusable)
	}
	h := &Hierarchy{Mount: mount}
	enable := true
	switch {
	case own == "/":
		h.Root = filepath.Join(mount, SubtreeName)
		if err := os.Mkdir(h.Root, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
		}
	case path.Base(own) == supervisorName:
		h.Root = filepath.Join(mount, path.Dir(own))
	default:
		h.Root, enable = filepath.Join(mount, own), false
	}
	if _, err := os.Stat(filepath.Join(h.Root, "cgroup.kill")); err != nil {
		return nil, fmt.Errorf("%w: %s has no cgroup.kill (Linux 5.14 or later needed)", ErrUnusable, h.Root)
	}
	if err := probe(h.Root); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	if enable {
		enableAll(h.Root)
	}
	h.Controllers = words(filepath.Join(h.Root, "cgroup.subtree_control"))
	return h, nil
}

// findMount is the mount point of the first cgroup2 file system in
// mountinfo (proc(5): the fstype follows the " - " separator).
func findMount(mountinfo io.Reader) (string, error) {
	sc := bufio.NewScanner(mountinfo)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) >= 5 && len(g) >= 1 && g[0] == "cgroup2" {
			return unescape(f[4]), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no cgroup2 file system mounted")
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroup is the path of the "0::" line of /proc/self/cgroup.
func ownCgroup(s string) (string, bool) {
	for line := range strings.SplitSeq(s, "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return strings.TrimSuffix(p, " (deleted)"), true
		}
	}
	return "", false
}

// probe creates and removes a child of root: the proof that leaves can
// be made there (a read-only mount, or a cgroup not delegated to this
// user, fails it).
func probe(root string) error {
	dir, err := os.MkdirTemp(root, "probe-")
	if err != nil {
		return err
	}
	return os.Remove(dir)
}

// enableAll enables in root's cgroup.subtree_control every controller
// root is offered, one at a time (one refused spoils no other).
func enableAll(root string) {
	offered := words(filepath.Join(root, "cgroup.controllers"))
	enabled := words(filepath.Join(root, "cgroup.subtree_control"))
	for _, c := range offered {
		if !slices.Contains(enabled, c) {
			_ = os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte("+"+c), 0)
		}
	}
}

// words is the space-separated words of a file; nil if unreadable.
func words(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// readProcs is the pids listed in dir's cgroup.procs.
func readProcs(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, w := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(w); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}
