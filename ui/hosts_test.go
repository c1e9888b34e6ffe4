package ui

import (
	"strings"
	"testing"

	"cronvisor/internal/ctl"
)

// The Hosts tab is there only while the daemon's history is shared: its
// key and :hosts say why not otherwise, and tab cycling passes it by.
func TestHostsTabOnlyWithASharedHistory(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 80, 24)
	if h := strings.Split(m.View(), "\n")[0]; strings.Contains(h, "Hosts") {
		t.Errorf("the header offers Hosts without a shared history: %q", h)
	}
	m, _ = press(m, "5")
	if m.tab != tabJobs || !strings.Contains(m.status, "history is its own") {
		t.Errorf("5 without a shared history: tab %d, status %q", m.tab, m.status)
	}
	m, _ = press(m, "shift+tab")
	if m.tab != tabTimeline {
		t.Errorf("shift+tab from Jobs went to tab %d, want Timeline past the absent Hosts", m.tab)
	}

	f.hosts = fixtureHosts()
	m, _ = follow(t, m, m.fetchHosts())
	m, _ = m.showTab(tabJobs) // "1" is a window on the timeline, where the last step left
	m, _ = press(m, "shift+tab")
	if m.tab != tabHosts {
		t.Fatalf("shift+tab from Jobs went to tab %d, want Hosts", m.tab)
	}
	m, _ = press(m, "1", ":", "h", "o", "s", "t", "s", "enter")
	if m.tab != tabHosts || !strings.Contains(m.View(), "web-2") {
		t.Fatalf(":hosts did not show the hosts:\n%s", m.View())
	}

	f.hosts = ctl.Hosts{} // the daemon restarted with a history of its own
	m, _ = follow(t, m, m.fetchHosts())
	if m.tab != tabJobs {
		t.Errorf("the Hosts tab stays shown after the history stopped being shared (tab %d)", m.tab)
	}
}

// An older daemon, which has no hosts route, has no Hosts tab and is not
// asked again at every tick.
func TestHostsOfAnOlderDaemon(t *testing.T) {
	m := loaded(t, newFake(), Options{}, 80, 24)
	m, _ = m.update(hostsMsg{err: ctl.ErrUnsupported})
	if !m.tabHidden(tabHosts) || m.hosts.err != "" {
		t.Errorf("an older daemon: hidden %v, error %q; want a hidden tab and no error", m.tabHidden(tabHosts), m.hosts.err)
	}
	if _, cmd := m.hostsDue(m.wall()); cmd != nil {
		t.Error("the hosts are asked again within a refresh period")
	}
}

// A click selects a host, and the runs under the table are its own.
func TestHostsClickSelects(t *testing.T) {
	f := newFake()
	f.hosts = fixtureHosts()
	m := loaded(t, f, Options{}, 80, 24)
	m, cmd := press(m, "5")
	m, _ = follow(t, m, cmd)
	m = click(m, 5, 3) // the header's line 0, the table's header 1, web-1 2, web-2 3
	if s := m.View(); !strings.Contains(s, "runs on web-2.example.com") || !strings.Contains(s, "r-rot-2") {
		t.Errorf("a click on web-2 did not show its runs:\n%s", s)
	}
}
