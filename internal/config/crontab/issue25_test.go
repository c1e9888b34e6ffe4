package crontab

import (
	"slices"
	"testing"
)

// TestLooksSystem: a system crontab read as a user one is told by its
// user field (a known user in column 6 of every entry) or by
// /etc/crontab's own lines; a user crontab is not.
func TestLooksSystem(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       bool
		users      []string
	}{
		{"etc crontab", "SHELL=/bin/sh\n17 * * * * root cd / && run-parts --report /etc/cron.hourly\n", true, []string{"root"}},
		{"known users", "0 1 * * * www-data /usr/bin/php /var/www/cron.php\n0 2 * * * root /usr/sbin/backup\n", true, []string{"www-data", "root"}},
		{"unknown user, debian shape", "25 6 * * * builder test -x /usr/sbin/anacron || run-parts /etc/cron.daily\n", true, []string{"builder"}},
		{"user crontab", "0 1 * * * /usr/local/bin/backup.sh\n0 2 * * * root-cleanup --all\n", false, nil},
		{"one line of many", "0 1 * * * root /x\n0 2 * * * /usr/bin/y\n", false, []string{"root"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			users, ok := LooksSystem(Parse(tc.text, false), homes)
			if ok != tc.want || !slices.Equal(users, tc.users) {
				t.Errorf("LooksSystem = %q, %v; want %q, %v", users, ok, tc.users, tc.want)
			}
		})
	}
}

// TestSplitPing: the healthchecks pings of its docs become ping:, others
// stay in the command.
func TestSplitPing(t *testing.T) {
	const u = "https://hc-ping.com/0c4d2a1e-6f0b-4a35-9d7e-0c1a2b3c4d5e"
	for _, tc := range []struct{ in, rest, url string }{
		{"/x.sh && curl -fsS -m 10 --retry 5 -o /dev/null " + u, "/x.sh", u},
		{"curl -fsS --retry 3 " + u + " > /dev/null", "", u},
		{"wget -q -O - '" + u + "'", "", u},
		{"/x.sh && curl -fsS https://hc.example.com/ping/abc123", "/x.sh", "https://hc.example.com/ping/abc123"},
		{"/x.sh; curl -fsS " + u + "/$?", "", ""},
		{"/x.sh && curl -fsS " + u + "/fail", "", ""},
		{"/x.sh && curl -fsS https://example.com/hook", "", ""},
		{"curl " + u + " | tee /tmp/x", "", ""},
	} {
		rest, url, ok := splitPing(tc.in)
		if ok != (tc.url != "") || url != tc.url || ok && rest != tc.rest {
			t.Errorf("splitPing(%q) = %q, %q, %v; want %q, %q", tc.in, rest, url, ok, tc.rest, tc.url)
		}
	}
}

// TestNamesAfterTheTarget: a job running a tool is named after what the
// tool works on; a script after the script.
func TestNamesAfterTheTarget(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"/usr/local/bin/backup.sh --full", "backup"},
		{"find /var/log/app -name '*.gz' -delete", "find_app"},
		{"tar czf /backup/home.tgz /home", "tar_home"},
		{"curl -fsS https://example.com/api/refresh?x=1 -o /dev/null", "curl_refresh"},
		{"curl -fsS https://example.com/", "curl_example.com"},
		{"rsync -a /srv/ backup:/srv/ > /tmp/rsync.log", "rsync_srv"},
		{"mysql -u app app_db -e 'OPTIMIZE TABLE sessions'", "mysql"},
		{"cd /srv && find . -mtime +7 -delete", "find"},
	} {
		if got, _ := baseName(tc.cmd); got != tc.want {
			t.Errorf("baseName(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}
