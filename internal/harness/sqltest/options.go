package sqltest

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
)

// Option changes how a server is started.
type Option func(*options)

type options struct {
	host  string       // the address it listens on
	trust netip.Prefix // PostgreSQL: the clients let in besides loopback
	// settings are PostgreSQL's extra "name=value" server settings.
	settings []string
}

// Listen makes the server listen on host (an IPv4 or IPv6 address of
// this machine, as a test's bridge to network namespaces has) instead of
// 127.0.0.1, and let in any client of subnet: PostgreSQL trusts it in
// pg_hba.conf, MariaDB lets everyone in already.
func Listen(host string, subnet netip.Prefix) Option {
	return func(o *options) { o.host, o.trust = host, subnet }
}

// Settings adds PostgreSQL server settings ("name=value", each given as
// -c after the defaults, so that it wins): a benchmark of many hosts
// needs more than the tests' connections.
func Settings(kv ...string) Option {
	return func(o *options) { o.settings = append(o.settings, kv...) }
}

func applyOptions(opts []Option) (options, error) {
	o := options{host: "127.0.0.1"}
	for _, f := range opts {
		f(&o)
	}
	if _, err := netip.ParseAddr(o.host); err != nil {
		return o, fmt.Errorf("sqltest: listen address: %v", err)
	}
	return o, nil
}

// Host is the address the server listens on.
func (s *server) Host() string { return s.host }

// Addr is the server's host:port.
func (s *server) Addr() string { return s.addr() }

// trustSubnet lets subnet's clients into the PostgreSQL of data without
// a password, as initdb --auth=trust does for loopback.
func trustSubnet(data string, subnet netip.Prefix) error {
	if !subnet.IsValid() {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("sqltest: trust %s: %w", subnet, err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "host all all %s trust\n", subnet.Masked()); err != nil {
		return fmt.Errorf("sqltest: trust %s: %w", subnet, err)
	}
	return nil
}

// freePortOn is a port free on host at the time of asking.
func freePortOn(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
