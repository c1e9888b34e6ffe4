package daemon

import (
	"errors"
	"net"
	"os"
	"time"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock"
)

// Settling times of a deletion: the daemon acts settle after it is told,
// so that a `rm -rf` of a few files has ended; when the dir is still
// there but its socket's lock is gone (`rm -rf STATE_DIR/*`, or the
// first files of a long `rm -rf STATE_DIR`), it waits up to settleMax for
// the dir to go too, rather than make files in a dir being deleted.
const (
	settle    = 100 * time.Millisecond
	settleMax = time.Second
)

// dirGuard keeps the daemon's state dir while it runs. When the dir is
// deleted (or its socket's lock file), nothing tells another daemon that
// this one supervises the path: a second one would start there, fire
// every job again and, opening a new history.db, take the place of this
// one's records. So the guard makes the dir again, takes the socket's
// lock on the new lock file and binds the socket again (a second daemon
// is then refused as usual), puts the history this daemon still has open
// back at its path, and the running runs' logs. See
// docs/operations.md, "The state dir".
type dirGuard struct {
	d    *Daemon
	dir  statedir.Dir
	w    *statedir.Watch
	quit chan struct{} // closed by stop
	done chan struct{}
	// lock and sock are the socket's lock file and socket this daemon
	// holds, as it bound them; zero when it serves no socket.
	lock, sock procfs.FileID
}

// guardStateDir starts the guard of the state dir; nil when inotify
// cannot watch it (logged: the daemon runs unguarded, as before).
func (d *Daemon) guardStateDir(stateDir string, served bool) *dirGuard {
	g := &dirGuard{d: d, dir: statedir.Dir(stateDir), quit: make(chan struct{}), done: make(chan struct{})}
	w, err := statedir.NewWatch(g.dir)
	if err != nil {
		d.log.Warn("not watching the state dir: its deletion under this daemon would go unnoticed", "err", err)
		return nil
	}
	g.w = w
	if served {
		g.lock, g.sock = fileID(g.dir.SocketLock()), fileID(g.dir.Socket())
	}
	go func() {
		defer close(g.done)
		for g.w.Wait() == nil && g.settle() {
			g.check()
		}
	}()
	d.log.Debug("started", "part", "state dir guard")
	return g
}

// stop ends the guard and waits for it.
func (g *dirGuard) stop() {
	if g == nil {
		return
	}
	close(g.quit)
	g.w.Close()
	<-g.done
	g.d.log.Debug("stopped", "part", "state dir guard")
}

// settle waits for a deletion under way to end (see settle); false when
// the guard is stopped meanwhile.
func (g *dirGuard) settle() bool {
	t := time.NewTimer(settle)
	defer t.Stop()
	for waited := time.Duration(0); ; waited += settle {
		select {
		case <-g.quit:
			return false
		case <-t.C:
		}
		if waited+settle >= settleMax || g.dir.Missing() || !g.lockGone() {
			return true
		}
		t.Reset(settle)
	}
}

// lockGone tells whether the socket's lock file at its path is not the
// one this daemon holds.
func (g *dirGuard) lockGone() bool {
	return fileID(g.dir.SocketLock()) != g.lock
}

// check makes again what was deleted: the dir, the socket and its lock,
// the history and the runs' logs. It does nothing when nothing is gone
// (a chmod of the lock file, or a deletion already mended).
func (g *dirGuard) check() {
	missing, lockGone := g.dir.Missing(), g.lockGone()
	if !missing && !lockGone {
		return
	}
	log := g.d.log
	log.Error("the state dir was deleted under the running daemon; making it again, with its socket, its lock and the history this daemon holds",
		"state_dir", g.dir.String(), "dir_deleted", missing)
	if err := g.dir.Remake(); err != nil {
		log.Error("the state dir cannot be made again; a second daemon could start there", "state_dir", g.dir.String(), "err", err)
		return
	}
	if err := g.w.Arm(); err != nil {
		log.Warn("the state dir made again is not watched", "err", err)
	}
	g.relisten()
	env := g.d.env
	if env.relock != nil {
		if n, err := env.relock(); err != nil {
			log.Error("the locks of running runs cannot all be taken again on new files; another process may run their jobs beside them", "err", err)
		} else if n > 0 {
			log.Info("took the locks of running runs again on new files", "locks", n)
		}
	}
	if err := env.Store.Writable(); err != nil {
		log.Error("history: the database cannot be put back at its path yet; records wait in memory", "err", err)
	}
	if n, err := env.History.RelinkLogs(); err != nil {
		log.Error("the logs of running runs cannot be put back", "err", err)
	} else if n > 0 {
		log.Info("put the logs of running runs back", "runs", n)
	}
	log.Info("the state dir is made again", "state_dir", g.dir.String())
}

// relisten takes the socket's lock on its new file and binds the socket
// again, serving it beside the old one (whose connections go on): a
// second daemon is refused from now on. The old socket, if still at its
// path, is this daemon's and is removed first.
func (g *dirGuard) relisten() {
	log := g.d.log
	if g.sock != (procfs.FileID{}) && fileID(g.dir.Socket()) == g.sock {
		if err := os.Remove(g.dir.Socket()); err != nil {
			log.Error("control socket: cannot remove this daemon's old socket to bind it again", "err", err)
			return
		}
	}
	ln, err := g.d.o.Listen(g.dir.Socket())
	if errors.Is(err, ctl.ErrInUse) {
		log.Error("another daemon took the state dir while it was gone; two daemons now supervise it",
			"err", anotherDaemon(g.dir.String(), g.dir.Socket()))
		return
	}
	if err != nil {
		log.Error("control socket cannot be bound again; a second daemon could start on the state dir", "err", err)
		return
	}
	if !g.d.socket.add(ln) {
		ln.Close()
		return
	}
	g.lock, g.sock = fileID(g.dir.SocketLock()), fileID(g.dir.Socket())
	log.Info("control socket bound again; the daemon's lock is held on its new lock file", "socket", g.dir.Socket())
}

// fileID is the identity of the file at path, zero when there is none.
func fileID(path string) procfs.FileID {
	fi, err := os.Lstat(path)
	if err != nil {
		return procfs.FileID{}
	}
	return procfs.IDOf(fi)
}

// keepPath stops ln from removing its socket's path when it closes: the
// path is a newer listener's now.
func keepPath(ln net.Listener) {
	if u, ok := ln.(interface{ SetUnlinkOnClose(bool) }); ok {
		u.SetUnlinkOnClose(false)
	}
}

// relockOf is the locker's Relock, nil when it has none (the backends
// whose locks live on a server, not in the state dir).
func relockOf(l lock.Locker) func() (int, error) {
	if r, ok := l.(interface{ Relock() (int, error) }); ok {
		return r.Relock
	}
	return nil
}
