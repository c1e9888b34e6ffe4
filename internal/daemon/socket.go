package daemon

import (
	"context"
	"net"
	"sync"

	"cronvisor/internal/ctl"
)

// socket is the control socket's server goroutine. It serves the socket
// bound at start-up and, after the state dir was deleted, the one bound
// again (add) beside it: the old one's connections (a console, `logs
// -f`) go on until shutdown.
type socket struct {
	ctx  context.Context
	stop context.CancelFunc
	done chan struct{}
	next chan net.Listener
	mu   sync.Mutex
	lns  []net.Listener // served, the newest last
}

// serve serves the control socket on ln (nil: no socket yet). The socket
// has a context of its own, not d.ctx: consoles and status watch the
// drain at shutdown, so it is served until the runs have ended.
func (d *Daemon) serve(ln net.Listener) *socket {
	ctx, stop := context.WithCancel(context.Background())
	s := &socket{ctx: ctx, stop: stop, next: make(chan net.Listener)}
	if ln != nil {
		s.lns = []net.Listener{ln}
	}
	s.done = d.start("socket", func() { s.run(d, ln) })
	return s
}

// run serves ln and every listener added, until the socket's context
// ends, and waits for each server.
func (s *socket) run(d *Daemon, ln net.Listener) {
	var wg sync.WaitGroup
	serve := func(ln net.Listener) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := ctl.Serve(s.ctx, ln, d.svc, d.log); err != nil {
				d.log.Error("control socket stopped", "err", err)
			}
		}()
	}
	if ln != nil {
		serve(ln)
	}
	for {
		select {
		case <-s.ctx.Done():
			wg.Wait()
			return
		case ln := <-s.next:
			serve(ln)
		}
	}
}

// add serves ln too, the socket bound again at its path; false when the
// socket is stopping (the caller closes ln). The listeners served before
// no longer remove the path when they close: it is ln's.
func (s *socket) add(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, old := range s.lns {
		keepPath(old)
	}
	select {
	case s.next <- ln:
	case <-s.ctx.Done():
		return false
	}
	s.lns = append(s.lns, ln)
	return true
}
