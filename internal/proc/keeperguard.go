package proc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/plainjson"
	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/statedir"
)

// A run's guard file (a slot, statedir.Dir.Guard, beside the Ends) is
// what the next supervisor on the state dir needs to guard the run if
// its supervisor and its keeper both die: the keeper's arguments
// (deadline, timeout, grace, tag, cgroup leaf, job and slot) and, for a
// Redis lease, its hand-off (the URL with its password: the file is
// 0600 in a 0700 directory, as the rest of the state dir). The
// supervisor writes it before the run is handed to its keeper and marks
// it free once it saw the run end; a run handed over (a dead or upgraded
// supervisor) keeps it until the next supervisor is done with it. A
// supervisor reuses its slot files: a run costs two writes into the page
// cache, not a file's creation and removal (a journalled metadata change
// each). It does not keep them open between the writes: every descriptor
// of this process is copied into each run's fork and closed again at its
// exec, so a hundred idle slots made every start slower. Not synced:
// after a machine crash there is no run left to guard.
type guardFile struct {
	Written time.Time `json:"written"`
	Args    []string  `json:"args"`
	Lease   []byte    `json:"lease,omitempty"`
}

// freeGuard marks a slot free: no JSON object starts with it.
var freeGuard = []byte("-")

// guardSlot is one slot file.
type guardSlot struct {
	path string
	pool *guardPool
}

// guardPool is this process's slots in one state dir.
type guardPool struct {
	mu    sync.Mutex
	name  string // this process's part of its slots' names: PID-STARTNS
	free  []*guardSlot
	count int
}

// guardPools are this process's guard slots by state dir (the
// directory of the Ends). Process-wide, as the slots' names are the
// process's: two pools of one process would write the same files.
var guardPools = struct {
	sync.Mutex
	byDir map[string]*guardPool
}{byDir: map[string]*guardPool{}}

func poolFor(dir string) *guardPool {
	guardPools.Lock()
	defer guardPools.Unlock()
	p := guardPools.byDir[dir]
	if p == nil {
		// The start tells this process's slots from those a dead
		// process of the same pid left.
		p = &guardPool{name: strconv.Itoa(procfs.Self()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 10)}
		guardPools.byDir[dir] = p
	}
	return p
}

// take returns a free slot beside end, a new one if none is free.
func (p *guardPool) take(end string) *guardSlot {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		return s
	}
	p.count++
	return &guardSlot{path: statedir.GuardBeside(end, p.name+"-"+strconv.Itoa(p.count-1)), pool: p}
}

// write writes data at the start of the slot's file, made (with its
// directory) if need be. Plain system calls: os.OpenFile would first
// offer the file to the runtime's poller, which refuses regular files.
func (s *guardSlot) write(data []byte) error {
	fd, err := openGuard(s.path)
	if err == unix.ENOENT {
		if err = os.MkdirAll(filepath.Dir(s.path), 0o700); err == nil {
			fd, err = openGuard(s.path)
		}
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: s.path, Err: err}
	}
	_, err = unix.Pwrite(fd, data, 0)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: s.path, Err: err}
	}
	return nil
}

// openGuard opens a slot's file for writing, made if need be; an open
// that a signal interrupted is made again (os.OpenFile does the same).
func openGuard(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// writeGuard writes the guard of the run that keeper args (keeperArgs)
// and lease describe into a slot beside end; nil if it cannot (the run
// is then its keeper's alone, as before guard files).
func writeGuard(end string, args []string, lease []byte) *guardSlot {
	if end == "" {
		return nil
	}
	data, err := encodeGuard(guardFile{Written: time.Now(), Args: args[1:], Lease: lease})
	if err != nil {
		return nil
	}
	s := poolFor(filepath.Dir(end)).take(end)
	// Over the slot's last run's longer guard, if it was: the reader
	// takes the first JSON object and leaves the rest.
	if err := s.write(data); err != nil {
		s.release()
		return nil
	}
	return s
}

// encodeGuard is json.Marshal(g), byte for byte, without reflection for
// the guards of nearly every run (plain arguments): one is written per
// run. TestEncodeGuardIsJSONMarshal holds the two together.
func encodeGuard(g guardFile) ([]byte, error) {
	if g.Args == nil || !plainjson.Time(g.Written) || slices.ContainsFunc(g.Args, notPlain) {
		return json.Marshal(g)
	}
	b := make([]byte, 0, 512)
	b = plainjson.AppendTime(append(b, `{"written":`...), g.Written)
	b = append(b, `,"args":[`...)
	for i, a := range g.Args {
		if i > 0 {
			b = append(b, ',')
		}
		b = plainjson.AppendString(b, a)
	}
	b = append(b, ']')
	if len(g.Lease) > 0 {
		b = append(b, `,"lease":"`...)
		b = base64.StdEncoding.AppendEncode(b, g.Lease)
		b = append(b, '"')
	}
	return append(b, '}'), nil
}

func notPlain(s string) bool { return !plainjson.String(s) }

// release marks the slot free and gives it back to its pool.
func (s *guardSlot) release() {
	if s == nil {
		return
	}
	if err := s.write(freeGuard); err != nil {
		return // not reused: its run may still read as kept
	}
	s.pool.mu.Lock()
	s.pool.free = append(s.pool.free, s)
	s.pool.mu.Unlock()
}

// ErrGuardFree is ReadGuard's answer for a slot no run holds.
var ErrGuardFree = errors.New("guard slot free")

// Orphaned is a run as its guard file describes it.
type Orphaned struct {
	RunID string
	// Run names the run: job, slot, attempt, manual, supervisor.
	Run KeptRun
	// Written is when the file was written, just before the run's start.
	Written  time.Time
	Tag      string // the run's KEY=VALUE environment tag
	Cgroup   string // the run's cgroup leaf, "" for none
	Deadline time.Time
	Timeout  time.Duration
	Grace    time.Duration // between SIGTERM and SIGKILL
	// AtOnce: the run was to be ended at once when its supervisor died,
	// within Within (a lease nothing of it could keep).
	AtOnce bool
	Within time.Duration
	Lease  []byte // a lease hand-off for backends.KeepLease, nil for none
	// Session: the run holds its lock's SQL session (fd 3); Lock: it
	// holds its lock file (fd 3).
	Session, Lock bool
}

// ReadGuard reads the guard file at path: ErrGuardFree for a free slot.
func ReadGuard(path string) (Orphaned, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Orphaned{}, err
	}
	if !bytes.HasPrefix(data, []byte("{")) {
		return Orphaned{}, ErrGuardFree
	}
	var g guardFile
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&g); err != nil {
		return Orphaned{}, fmt.Errorf("%s: %w", path, err)
	}
	f, ok := parseKeeperFlags(g.Args)
	if !ok {
		return Orphaned{}, fmt.Errorf("%s: not a run's keeper arguments: %q", path, g.Args)
	}
	return Orphaned{RunID: runIDOf(f.tag), Run: f.run, Written: g.Written, Tag: f.tag, Cgroup: f.cgroup,
		Deadline: f.deadline, Timeout: f.timeout, Grace: f.grace, AtOnce: f.atOnce, Within: f.within,
		Lease: g.Lease, Session: f.session, Lock: f.lock}, nil
}

// GuardOwner is the supervisor pid and start of a guard slot's name
// (statedir.GuardSlot); false if the name is not a slot's.
func GuardOwner(slot string) (pid int, started time.Time, ok bool) {
	var ns int64
	var n int
	if _, err := fmt.Sscanf(slot, "%d-%d-%d", &pid, &ns, &n); err != nil || pid <= 0 {
		return 0, time.Time{}, false
	}
	return pid, time.Unix(0, ns), true
}
