package proc

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// defaultPath is used when the run's environment has no PATH, as sh does.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// lookPath resolves name the way the run's own shell would: in the PATH of
// env, not the supervisor's (exec.LookPath only knows the latter). Relative
// PATH entries are taken relative to dir, where the child will run; the
// result may stay relative because exec.Cmd evaluates a relative Path in Dir.
func lookPath(name, dir string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil // exec reports a missing or unexecutable file itself
	}
	path := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v // the last one wins, as in exec.Cmd
		}
	}
	denied := ""
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		cand := filepath.Join(d, name)
		onDisk := cand
		if !filepath.IsAbs(cand) && dir != "" {
			onDisk = filepath.Join(dir, cand)
		}
		fi, err := os.Stat(onDisk)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Mode()&0o111 != 0 {
			if !filepath.IsAbs(cand) {
				cand = "./" + cand // a slash keeps execve from reading it as a bare name
			}
			return cand, nil
		}
		if denied == "" {
			denied = onDisk
		}
	}
	if denied != "" {
		return "", &fs.PathError{Op: "exec", Path: denied, Err: unix.EACCES}
	}
	return "", fmt.Errorf("%w: %s (PATH=%s)", exec.ErrNotFound, name, path)
}
