package ctl

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/statedir"
)

// Both ends of the socket check the other's uid with SO_PEERCRED, which
// the kernel records at connect (client's uid) and at listen (server's):
// neither can be forged by what is said on the connection.
//
// The server serves its own user and root; anyone else gets one 403 that
// says a daemon runs and refused them, so that an operator of another
// account is told why rather than seeing a dropped connection. The client
// trusts a server of its own user or root only: root's `status` must not
// print what a socket planted by another user answers.

// allowUser allows peers running as uid, and root, who could read the
// state dir anyway.
func allowUser(uid int) func(uint32) bool {
	return func(peer uint32) bool { return peer == 0 || int(peer) == uid }
}

// peerKey carries a connection's peerInfo in its requests' contexts.
type peerKey struct{}

// peerInfo is what SO_PEERCRED said about a connection's client.
type peerInfo struct {
	cred *unix.Ucred
	err  error
}

// connPeer is http.Server.ConnContext: the credentials are read once per
// connection, when it is accepted.
func connPeer(ctx context.Context, c net.Conn) context.Context {
	cred, err := peerCred(c)
	return context.WithValue(ctx, peerKey{}, peerInfo{cred: cred, err: err})
}

// guard answers 403 to every request from a client allow refuses, before
// any handler sees it, and logs the refusal.
func guard(allow func(uint32) bool, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := r.Context().Value(peerKey{}).(peerInfo)
		if p.err == nil && p.cred != nil && allow(p.cred.Uid) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		self := statedir.UserName(uint32(os.Geteuid()))
		if p.cred == nil {
			log.Warn("control socket: refused a connection whose peer is unknown", "err", p.err)
			writeJSON(w, http.StatusForbidden, errorBody{Code: codeRefused,
				Error: fmt.Sprintf("the cronvisor daemon (pid %d, running as %s) refused you: it cannot tell who you are (%v)", os.Getpid(), self, p.err)})
			return
		}
		log.Warn("control socket: refused a connection from another user",
			"uid", p.cred.Uid, "pid", p.cred.Pid, "method", r.Method, "path", r.URL.Path)
		writeJSON(w, http.StatusForbidden, errorBody{Code: codeRefused,
			Error: fmt.Sprintf("the cronvisor daemon (pid %d, running as %s) refused you (%s): its control socket serves only its own user and root",
				os.Getpid(), self, statedir.UserName(p.cred.Uid))})
	})
}

// UntrustedError is a control socket served by a process of another user
// than the client's own or root. It matches ErrUntrusted.
type UntrustedError struct {
	Path      string
	ServerUID uint32
	ServerPID int32
	Self      int
}

// Error names the socket, who serves it and who asked.
func (e *UntrustedError) Error() string {
	trusted := "root"
	if e.Self != 0 {
		trusted = "you (" + statedir.UserName(uint32(e.Self)) + ") or root"
	}
	return fmt.Sprintf("control socket %s is served by pid %d running as %s, not by %s: not trusting its answers (another user may have planted it; see who can write %s)",
		e.Path, e.ServerPID, statedir.UserName(e.ServerUID), trusted, filepath.Dir(e.Path))
}

// Unwrap makes it match ErrUntrusted.
func (e *UntrustedError) Unwrap() error { return ErrUntrusted }

// refusedError is a refusal the client worked out itself (EACCES on a
// listening socket); it matches ErrRefused.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return ErrRefused }

// checkServer returns an error unless c's server runs as this process's
// effective user or root.
func checkServer(c net.Conn, path string) error {
	cred, err := peerCred(c)
	if err != nil {
		return fmt.Errorf("control socket %s: cannot tell who serves it, not trusting it: %w", path, err)
	}
	self := os.Geteuid()
	if cred.Uid == 0 || int(cred.Uid) == self {
		return nil
	}
	return &UntrustedError{Path: path, ServerUID: cred.Uid, ServerPID: cred.Pid, Self: self}
}

// peerCred reads SO_PEERCRED: the uid and pid of the process at the other
// end, as the kernel recorded them when the connection was made.
func peerCred(c net.Conn) (*unix.Ucred, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, fmt.Errorf("peer credentials: %T is not a unix socket connection", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Ucred
	var credErr error
	err = raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if err == nil {
		err = credErr
	}
	if err != nil {
		return nil, fmt.Errorf("peer credentials: %w", err)
	}
	return cred, nil
}
