package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/harness/sqltest"
)

// netLab is a test's own network: a bridge in the root namespace, whose
// address the test's SQL server listens on, and hosts, each a network
// namespace with a veth pair to the bridge, its daemon started inside.
// A host's link to the server can be cut silently (iptables DROP both
// ways: no RST, no ICMP), as a partition does. Everything is named after
// the lab's random id, so parallel tests do not collide, and removed when
// the test ends, failed or not (and, should the test process die without
// its cleanups, by the next lab: sweepDeadLabs). Needs root, ip (iproute2), iptables and
// nsenter (util-linux).
type netLab struct {
	t      *testing.T
	id     string       // 6 hex digits in every name
	tag    string       // cve2e-PID-ID: the names that outlive a dead test process carry its pid
	subnet netip.Prefix // a /24 of 10/8 that no interface here uses
	server netip.Addr   // the bridge's address: .1
	bridge string

	mu    sync.Mutex
	hosts int
	rules map[string][]string // the DROP rules in force, by comment
}

// netHost is one host of a lab: its namespace, its address, the sandbox
// (directory, jobs.yaml, state dir) its daemon and commands run on.
type netHost struct {
	*sandbox
	lab  *netLab
	name string // its host name (UTS namespace) too
	ns   string
	addr netip.Addr
}

// newNetLab sets up the bridge; a cleanup removes the lab.
func newNetLab(t *testing.T) *netLab {
	t.Helper()
	for _, tool := range []string{"ip", "iptables", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for the network namespaces (test.sh installs iproute2, iptables, util-linux): %v", tool, err)
		}
	}
	sweepDeadLabs(t)
	l := &netLab{t: t, id: randHex(3), rules: map[string][]string{}}
	l.tag = fmt.Sprintf("cve2e-%d-%s", os.Getpid(), l.id)
	l.bridge = "cv" + l.id + "br"
	l.subnet = freeSubnet(t)
	l.server = l.subnet.Addr().Next()
	t.Cleanup(l.remove)
	l.ip("link", "add", l.bridge, "type", "bridge")
	l.ip("link", "set", l.bridge, "alias", l.tag)
	l.ip("addr", "add", netip.PrefixFrom(l.server, 24).String(), "dev", l.bridge)
	l.ip("link", "set", l.bridge, "up")
	return l
}

// freeSubnet picks a 10.x.y.0/24 that no address of this machine is in.
func freeSubnet(t *testing.T) netip.Prefix {
	t.Helper()
	out, err := exec.Command("ip", "-4", "-o", "addr").CombinedOutput()
	if err != nil {
		t.Fatalf("ip -4 -o addr: %v\n%s", err, out)
	}
	for range 100 {
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(64 + rand.IntN(190)), byte(rand.IntN(256)), 0}), 24)
		if !strings.Contains(string(out), " "+strings.TrimSuffix(p.Addr().String(), "0")) {
			return p
		}
	}
	t.Fatal("no free 10.x.y.0/24 after 100 tries")
	return netip.Prefix{}
}

// run runs a setup command, bounded, failing the test on an error.
func (l *netLab) run(name string, args ...string) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, name, args...).CombinedOutput(); err != nil {
		l.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func (l *netLab) ip(args ...string) { l.t.Helper(); l.run("ip", args...) }

// sweepDeadLabs removes what labs of test processes that died without
// their cleanups (a timeout's panic, a SIGKILL) left behind: the
// processes in their namespaces (daemons would run on), the namespaces,
// the bridges, the DROP rules. A lab's names carry its test process's
// pid, so the labs of live processes, parallel tests among them, are
// left alone.
func sweepDeadLabs(t *testing.T) {
	t.Helper()
	dead := func(name string) bool { // name: cve2e-PID-...
		f := strings.SplitN(name, "-", 3)
		pid, err := strconv.Atoi(f[min(1, len(f)-1)])
		return len(f) == 3 && f[0] == "cve2e" && err == nil && syscall.Kill(pid, 0) == syscall.ESRCH
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, l := range lines(string(out)) {
		if ns := strings.Fields(l)[0]; dead(ns) {
			pids, _ := exec.Command("ip", "netns", "pids", ns).Output()
			for _, p := range strings.Fields(string(pids)) {
				if pid, err := strconv.Atoi(p); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			_ = exec.Command("ip", "netns", "del", ns).Run()
		}
	}
	out, _ = exec.Command("ip", "-o", "link", "show", "type", "bridge").Output()
	for _, l := range lines(string(out)) {
		// "N: NAME: <...> ... \    alias cve2e-PID-ID"
		if i := strings.Index(l, "alias "); i >= 0 && dead(strings.Fields(l[i+len("alias "):])[0]) {
			_ = exec.Command("ip", "link", "del", strings.TrimSuffix(strings.Fields(l)[1], ":")).Run()
		}
	}
	out, _ = exec.Command("iptables", "-w", "-S").Output()
	for _, l := range lines(string(out)) {
		f := strings.Fields(l)
		if i := slices.Index(f, "--comment"); len(f) > 1 && f[0] == "-A" && i >= 0 && i+1 < len(f) && dead(f[i+1]) {
			_ = exec.Command("iptables", append([]string{"-w", "-D"}, f[1:]...)...).Run()
		}
	}
}

// sqlServer starts a server of kind for this lab alone, listening on the
// bridge's address and letting the subnet in; closed when the test ends.
// Its backend lines name that address, so every host reaches it over
// its link.
func (l *netLab) sqlServer(kind string) sqlServer {
	l.t.Helper()
	listen := sqltest.Listen(l.server.String(), l.subnet)
	var s sqlServer
	if kind == "mysql" {
		m, err := sqltest.StartMariaDB(listen)
		if err != nil {
			l.t.Fatal(err)
		}
		l.t.Cleanup(m.Close)
		s = mariaServer(m)
		s.backend = func(db string) string {
			return fmt.Sprintf("lock_backend: {type: mysql, dsn: 'root:${CV_E2E_DB_PASSWORD}@tcp(%s)/%s'}", m.Addr(), db)
		}
		return s
	}
	p, err := sqltest.StartPostgres(listen)
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(p.Close)
	s = pgServer(p)
	s.backend = func(db string) string {
		return fmt.Sprintf("lock_backend: {type: postgres, url: 'postgres://postgres:${CV_E2E_DB_PASSWORD}@%s/%s?sslmode=disable'}", p.Addr(), db)
	}
	return s
}

// historyBackend is the history_backend line for database db of a
// PostgreSQL server s of this lab.
func (l *netLab) historyBackend(s sqlServer, db string) string {
	return strings.Replace(s.backend(db), "lock_backend", "history_backend", 1)
}

// addHost makes a namespace linked to the bridge, and a sandbox whose
// jobs.yaml holds body (after state_dir); its daemon is not started.
func (l *netLab) addHost(name, body string) *netHost {
	l.t.Helper()
	l.mu.Lock()
	l.hosts++
	n := l.hosts
	l.mu.Unlock()
	h := &netHost{lab: l, name: name, ns: fmt.Sprintf("%s-%d", l.tag, n)}
	h.addr = l.server
	for range n {
		h.addr = h.addr.Next()
	}
	outer, inner := fmt.Sprintf("cv%sh%d", l.id, n), fmt.Sprintf("cv%sn%d", l.id, n)
	l.ip("netns", "add", h.ns)
	l.t.Cleanup(func() { l.quiet("ip", "link", "del", outer); l.quiet("ip", "netns", "del", h.ns) })
	l.ip("link", "add", outer, "type", "veth", "peer", "name", inner)
	l.ip("link", "set", inner, "netns", h.ns)
	l.ip("link", "set", outer, "master", l.bridge, "up")
	l.ip("-n", h.ns, "addr", "add", netip.PrefixFrom(h.addr, 24).String(), "dev", inner)
	l.ip("-n", h.ns, "link", "set", inner, "up")
	l.ip("-n", h.ns, "link", "set", "lo", "up")
	_ = os.Setenv("CV_E2E_DB_PASSWORD", dbSecret) // the same for every test; sandboxes pass it on
	h.sandbox = newSandbox(l.t, body)
	return h
}

// inside is argv run in the host's network namespace (nsenter changes
// nothing else: the filesystem, the state dir and its unix socket, the
// cgroups are the machine's) under its host name.
func (h *netHost) inside(argv ...string) []string {
	script := fmt.Sprintf("hostname %s && exec \"$@\"", h.name)
	return append([]string{"--net=/run/netns/" + h.ns, "unshare", "--uts", "sh", "-c", script, "sh"}, argv...)
}

// start starts the host's daemon in its namespace and waits until it
// serves; the sandbox's cleanup kills its process group.
func (h *netHost) start() *proc {
	h.t.Helper()
	d := h.startEnv(nil, "nsenter", h.inside(cvBin, "--config", h.config, "daemon", "--log-format", "json")...)
	waitFor(h.t, 10*time.Second, h.name+" start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	return d
}

// runCV runs a cronvisor command in the host's namespace, bounded by
// timeout: its exit code, stdout and stderr.
func (h *netHost) runCV(timeout time.Duration, args ...string) (int, string, string) {
	h.t.Helper()
	p := h.startEnv(nil, "nsenter", h.inside(append([]string{cvBin, "--config", h.config}, args...)...)...)
	code := p.wait(timeout)
	return code, p.stdout(), p.stderr()
}

// cut drops every packet between the host and the server, both ways,
// without a word: the host's connections go half-open.
func (h *netHost) cut() {
	h.t.Helper()
	l := h.lab
	tag := l.tag + "-" + h.name
	in := []string{"INPUT", "-s", h.addr.String(), "-d", l.server.String(), "-m", "comment", "--comment", tag, "-j", "DROP"}
	out := []string{"OUTPUT", "-s", l.server.String(), "-d", h.addr.String(), "-m", "comment", "--comment", tag, "-j", "DROP"}
	l.mu.Lock()
	l.rules[tag+"-in"], l.rules[tag+"-out"] = in, out
	l.mu.Unlock()
	l.run("iptables", append([]string{"-w", "-I"}, in...)...)
	l.run("iptables", append([]string{"-w", "-I"}, out...)...)
}

// heal lifts the host's cut.
func (h *netHost) heal() {
	h.t.Helper()
	l := h.lab
	tag := l.tag + "-" + h.name
	for _, k := range []string{tag + "-in", tag + "-out"} {
		l.mu.Lock()
		rule, ok := l.rules[k]
		delete(l.rules, k)
		l.mu.Unlock()
		if ok {
			l.run("iptables", append([]string{"-w", "-D"}, rule...)...)
		}
	}
}

// quiet runs a cleanup command, reporting a failure without stopping.
func (l *netLab) quiet(name string, args ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, name, args...).CombinedOutput(); err != nil {
		l.t.Errorf("cleanup: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// remove deletes the rules still in force and the bridge; the hosts'
// own cleanups (run before, being registered after) removed their
// namespaces and links.
func (l *netLab) remove() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, rule := range l.rules {
		l.quiet("iptables", append([]string{"-w", "-D"}, rule...)...)
		delete(l.rules, k)
	}
	l.quiet("ip", "link", "del", l.bridge)
}
