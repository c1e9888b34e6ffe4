package e2e

import (
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestE2EMetricsUsersLookFor scrapes a real daemon: build info, the last
// failure and failure streak of a failing job, and the reload gauges
// before and after a refused edit of jobs.yaml.
func TestE2EMetricsUsersLookFor(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	body := "jobs:\n  - {name: bad, schedule: \"* * * * * *\", command: \"exit 3\", timeout: 5s}\n"
	s := newSandbox(t, body)
	d := s.cv("daemon", "--log-format", "json", "--metrics-addr", "127.0.0.1:0")
	waitFor(t, 10*time.Second, "daemon start", func() bool { return metricsAddrLog.MatchString(d.stderr()) })
	url := "http://" + metricsAddrLog.FindStringSubmatch(d.stderr())[1] + "/metrics"
	waitFor(t, 15*time.Second, "two failed slots", func() bool { return len(s.historyJSON("--job", "bad", "--outcome", "failed")) >= 2 })
	value := func(scrape, series string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(scrape)
		if m == nil {
			t.Fatalf("/metrics lacks %s", series)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	scrape := httpGet(t, url)
	build := regexp.MustCompile(`(?m)^cronvisor_build_info\{goversion="` + regexp.QuoteMeta(runtime.Version()) + `",revision="[^"]+",version="[^"]+"\} 1$`)
	if !build.MatchString(scrape) {
		t.Errorf("/metrics lacks cronvisor_build_info{goversion,revision,version} 1")
	}
	now := float64(time.Now().Unix())
	if v := value(scrape, `cronvisor_job_last_failure_timestamp_seconds{job="bad"}`); v < now-15 || v > now+1 {
		t.Errorf("last failure %v, want within the last seconds (now %v)", v, now)
	}
	if v := value(scrape, `cronvisor_job_consecutive_failures{job="bad"}`); v < 2 {
		t.Errorf("consecutive failures %v, want 2 or more", v)
	}
	if v := value(scrape, "cronvisor_config_last_reload_successful"); v != 1 {
		t.Errorf("reload successful %v at start-up, want 1", v)
	}
	loaded := value(scrape, "cronvisor_config_last_reload_success_timestamp_seconds")
	if loaded < now-30 || loaded > now+1 {
		t.Errorf("last reload success %v, want the start-up's (now %v)", loaded, now)
	}
	if err := os.WriteFile(s.config, []byte(strings.Replace("state_dir: state\n"+body, "* * * * * *", "every tuesday", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the refusal", func() bool { return strings.Contains(d.stderr(), "reload refused") })
	scrape = httpGet(t, url)
	if v := value(scrape, "cronvisor_config_last_reload_successful"); v != 0 {
		t.Errorf("reload successful %v after a refused reload, want 0", v)
	}
	if v := value(scrape, "cronvisor_config_last_reload_success_timestamp_seconds"); v != loaded {
		t.Errorf("last reload success %v after a refused reload, want the start-up's %v", v, loaded)
	}
	stopDaemons(t, d)
}
