package e2e

import (
	"io/fs"
	"path/filepath"
	"regexp"

	"golang.org/x/sys/unix"

	"cronvisor/internal/proc/cgroup"
)

// runIDInName finds a run id (run.NewID's form) in a state dir entry's
// name: run logs and keepers' ends are named by their run.
var runIDInName = regexp.MustCompile(`\d{8}T\d{6}-[0-9a-f]{8}`)

// removeRunLeaves removes the cgroup leaves of the sandbox's runs that
// are left once every process of the sandbox is gone. A daemon killed
// together with its keeper leaves its run's empty leaf to the next daemon
// on the same state dir (recovery removes it), and a test's state dir
// never sees one. Each removal is logged: it is the product's behaviour,
// not hidden, only not left on the machine.
func (s *sandbox) removeRunLeaves() {
	h, err := cgroup.Detect()
	if err != nil {
		return // no cgroup v2 here: runs had no leaves
	}
	ids := map[string]bool{}
	_ = filepath.WalkDir(s.state, func(_ string, d fs.DirEntry, err error) error {
		if err == nil {
			for _, id := range runIDInName.FindAllString(d.Name(), -1) {
				ids[id] = true
			}
		}
		return nil
	})
	for id := range ids {
		leaf := filepath.Join(h.Root, "run-"+id)
		if unix.Rmdir(leaf) == nil {
			s.t.Logf("removed %s, the leaf of a run whose daemon and keeper were killed", leaf)
		}
	}
}
