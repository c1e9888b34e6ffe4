package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseAlerts(t *testing.T) {
	t.Setenv("CRONVISOR_TEST_TOKEN", "s3cret")
	src := strings.Join([]string{
		"metrics: {listen: '127.0.0.1:9750'}",
		"defaults:",
		"  timeout: 1m",
		"  notify:",
		"    - on: [failure, timeout, skip]",
		"      url: http://127.0.0.1:9000/hook",
		"      headers: {Authorization: 'Bearer ${CRONVISOR_TEST_TOKEN}'}",
		"      after_skips: 3",
		"jobs:",
		"  - name: a",
		"    schedule: '@hourly'",
		"    command: x",
		"    retries: 2",
		"    retry_backoff: 1s",
		"    retry_backoff_max: 3s",
		"    retry_on: [failed]",
		"    warn_after: 30s",
		"    ping: https://hc-ping.com/abc/",
		"    ping_skips: true",
		"  - name: b",
		"    schedule: '@hourly'",
		"    command: x",
		"    notify:",
		"      - on: [recovered, host_lost]",
		"        command: [page, oncall]",
	}, "\n")
	cfg, problems := Parse("/tmp/jobs.yaml", []byte(src))
	if errs := Errors(problems); len(errs) > 0 {
		t.Fatalf("problems: %v", errs)
	}
	if cfg.Metrics.Listen != "127.0.0.1:9750" {
		t.Errorf("metrics.listen = %q", cfg.Metrics.Listen)
	}
	a, b := cfg.Jobs[0], cfg.Jobs[1]
	hook := Target{On: EventFailure | EventTimeout | EventSkip, URL: "http://127.0.0.1:9000/hook",
		Headers: map[string]string{"Authorization": "Bearer s3cret"}, AfterSkips: 3}
	if !reflect.DeepEqual(a.Notify, []Target{hook}) {
		t.Errorf("a.Notify = %+v, want the defaults' %+v", a.Notify, hook)
	}
	if a.Retries != 2 || a.RetryBackoff != time.Second || a.RetryBackoffMax != 3*time.Second ||
		a.RetryOn != (RetryOn{Failed: true}) || a.WarnAfter != 30*time.Second {
		t.Errorf("a's retries = %d %v %v %+v warn %v", a.Retries, a.RetryBackoff, a.RetryBackoffMax, a.RetryOn, a.WarnAfter)
	}
	if a.Ping != "https://hc-ping.com/abc" || !a.PingSkips {
		t.Errorf("a's ping = %q %v", a.Ping, a.PingSkips)
	}
	page := Target{On: EventRecovered | EventHostLost, Command: []string{"page", "oncall"}, AfterSkips: 1}
	if !reflect.DeepEqual(b.Notify, []Target{page}) {
		t.Errorf("b.Notify = %+v, want only its own %+v", b.Notify, page)
	}
	if b.Retries != 0 || b.RetryOn != DefaultRetryOn {
		t.Errorf("b's retries = %d %+v", b.Retries, b.RetryOn)
	}
}
