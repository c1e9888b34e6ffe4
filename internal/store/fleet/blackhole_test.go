package fleet

import (
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// blackhole is a TCP proxy to a server that can go silent: after cut,
// every byte of the connections it has is dropped without a word, as a
// firewall's DROP does, and those connections stay half-open for good;
// connections made during the cut get nothing through either. After
// heal, new connections work again.
type blackhole struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu    sync.Mutex
	cut   bool
	conns []*hole
}

// hole is one proxied connection.
type hole struct {
	client, server net.Conn
	dead           atomic.Bool
}

// newBlackhole proxies to target (host:port) until the test ends.
func newBlackhole(t *testing.T, target string) *blackhole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackhole{ln: ln, target: target}
	b.wg.Add(1)
	go b.accept()
	t.Cleanup(b.close)
	return b
}

// via is rawURL with its host and port replaced by the proxy's.
func (b *blackhole) via(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = b.ln.Addr().String()
	return u.String()
}

func (b *blackhole) accept() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", b.target)
		if err != nil {
			c.Close()
			continue
		}
		h := &hole{client: c, server: s}
		b.mu.Lock()
		h.dead.Store(b.cut)
		b.conns = append(b.conns, h)
		b.mu.Unlock()
		b.wg.Add(2)
		go b.pipe(h, c, s)
		go b.pipe(h, s, c)
	}
}

// pipe copies src to dst while h lives, and drops what comes after.
func (b *blackhole) pipe(h *hole, dst, src net.Conn) {
	defer b.wg.Done()
	defer h.client.Close()
	defer h.server.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !h.dead.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// silence cuts every connection, the present ones for good.
func (b *blackhole) silence() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cut = true
	for _, h := range b.conns {
		h.dead.Store(true)
	}
}

// heal lets new connections through again.
func (b *blackhole) heal() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cut = false
}

func (b *blackhole) close() {
	b.ln.Close()
	b.mu.Lock()
	for _, h := range b.conns {
		h.client.Close()
		h.server.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}
