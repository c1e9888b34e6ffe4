package crontab

import (
	"reflect"
	"testing"
	"time"
)

func TestSplitPercent(t *testing.T) {
	cases := []struct {
		name, in, cmd, input string
		has                  bool
	}{
		{"none", "echo hi", "echo hi", "", false},
		{"escaped", `date +\%Y-\%m`, "date +%Y-%m", "", false},
		{"input", "mail root%a%b", "mail root", "a\nb", true},
		{"trailing", "cat%line%", "cat", "line\n", true},
		{"escaped in input", `cat%100\% done`, "cat", "100% done", true},
		{"other backslash kept", `echo a\tb%x\ty`, `echo a\tb`, `x\ty`, true},
		{"empty input", "cat%", "cat", "", true},
		{"escaped backslash", `echo \\%x`, `echo \\`, "x", true},
		{"backslashes in input", `cat%a\\%b\`, "cat", `a\%b\`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd, input, has := splitPercent(c.in)
			if cmd != c.cmd || input != c.input || has != c.has {
				t.Errorf("splitPercent(%q) = %q, %q, %v; want %q, %q, %v", c.in, cmd, input, has, c.cmd, c.input, c.has)
			}
		})
	}
}

func TestWithInputDelimiter(t *testing.T) {
	got := withInput("cat", "CRONVISOR_STDIN\nx")
	want := "{\ncat\n} <<'CRONVISOR_STDIN2'\nCRONVISOR_STDIN\nx\nCRONVISOR_STDIN2"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEnvLines(t *testing.T) {
	tab := Parse("A=1\n B = \"two words\" \nC='x'\nD=\"unbalanced'\n*/5 * * * * x=1 cmd\n", false)
	want := []Var{{1, "A", "1"}, {2, "B", "two words"}, {3, "C", "x"}, {4, "D", `"unbalanced'`}}
	if !reflect.DeepEqual(tab.Env, want) {
		t.Errorf("env = %v, want %v", tab.Env, want)
	}
	if len(tab.Entries) != 1 || tab.Entries[0].Command != "x=1 cmd" || len(tab.Entries[0].Env) != 4 {
		t.Errorf("entries = %+v", tab.Entries)
	}
}

func TestSimple(t *testing.T) {
	for s, want := range map[string]bool{
		"php a.php >/dev/null 2>&1": true,
		"a 'b; c' \"d | e\"":        true,
		"a; b":                      false,
		"a && b":                    false,
		"a | b":                     false,
		"a &":                       false,
		"a $(b)":                    false,
		"a `b`":                     false,
		"a &>/dev/null":             true,
		`a \; b`:                    true,
	} {
		if got := simple(s); got != want {
			t.Errorf("simple(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestUnwrap(t *testing.T) {
	grace := func(d time.Duration) *time.Duration { return &d }
	cases := []struct {
		in   string
		want unwrapped
	}{
		{"flock -n /l php x", unwrapped{command: "php x", lockPath: "/l", overlap: "skip"}},
		{"flock -xn /l php x", unwrapped{command: "php x", lockPath: "/l", overlap: "skip"}},
		{"flock --nonblock /l -c 'a && b'", unwrapped{command: "a && b", lockPath: "/l", overlap: "skip"}},
		{"flock /l x", unwrapped{command: "x", lockPath: "/l", overlap: "queue"}},
		{"flock -s /l x", unwrapped{command: "flock -s /l x"}},
		{"flock -n /l a && b", unwrapped{command: "flock -n /l a && b"}},
		{"timeout 30 x", unwrapped{command: "x", timeout: 30 * time.Second,
			notes: []string{"timeout(1) sent no SIGKILL without -k; cronvisor sends one after kill_grace"}}},
		{"timeout --signal=KILL 1.5m x", unwrapped{command: "x", timeout: 90 * time.Second, killGrace: grace(0)}},
		{"timeout -k 5 -s TERM 2h x", unwrapped{command: "x", timeout: 2 * time.Hour, killGrace: grace(5 * time.Second)}},
		{"timeout -s HUP 2h x", unwrapped{command: "timeout -s HUP 2h x"}},
		{"cd /srv && flock -n /l timeout -k 1m 1d ./x", unwrapped{command: "./x", dir: "/srv", lockPath: "/l",
			overlap: "skip", timeout: 24 * time.Hour, killGrace: grace(time.Minute)}},
		{"cd relative && x", unwrapped{command: "cd relative && x"}},
		{"cd $HOME && x", unwrapped{command: "cd $HOME && x"}},
		{"echo '>/dev/null 2>&1'", unwrapped{command: "echo '>/dev/null 2>&1'"}},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := unwrap(c.in); !reflect.DeepEqual(got, c.want) {
				t.Errorf("unwrap(%q) =\n %+v, want\n %+v", c.in, got, c.want)
			}
		})
	}
}

func TestBaseName(t *testing.T) {
	cases := []struct{ in, name, arg string }{
		{"php /var/www/artisan schedule:run", "artisan", "schedule:run"},
		{"/usr/local/bin/backup.sh --full", "backup", ""},
		{"APP=1 nice -n 10 python3 -u /opt/x/rotate.py", "rotate", ""},
		{"sudo -u www-data /usr/bin/php job.php", "job", ""},
		{"test -x /usr/sbin/anacron || ( cd / && run-parts --report /etc/cron.daily )", "cron.daily", ""},
		{"cd app && ./bin/console cache:clear", "console", "cache:clear"},
		{"[ -x /usr/bin/certbot ] && /usr/bin/certbot -q renew", "certbot", ""},
		{"cd /tmp", "cd", ""},
		{"sleep 30; /usr/local/bin/job", "job", ""},
		{"[ -x /usr/lib/php/sessionclean ] && if [ ! -d /run/systemd/system ]; then /usr/lib/php/sessionclean; fi", "sessionclean", ""},
	}
	for _, c := range cases {
		if name, arg := baseName(c.in); name != c.name || arg != c.arg {
			t.Errorf("baseName(%q) = %q, %q; want %q, %q", c.in, name, arg, c.name, c.arg)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 90 * time.Second: "1m30s", 5 * time.Minute: "5m",
		90 * time.Minute: "1h30m", 48 * time.Hour: "48h", 1500 * time.Millisecond: "1.5s"} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
