package daemon

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestMetricsServedWhenAsked(t *testing.T) {
	h := newHarness(t, oneJob)
	h.opts.MetricsAddr = "127.0.0.1:0"
	h.start()
	rec := h.tr.logged("serving metrics")
	if len(rec) != 1 {
		t.Fatalf("serving metrics records: %v", rec)
	}
	want := []string{"started locker", "started reaper", "started history", "started history writer", "started resources", "started recovery",
		"started notifications", "started skip log", "started outlog", "started metrics", "started scheduler", "started housekeeping",
		"started socket", "started state dir guard", "started watcher", "started memory settling"}
	equalSteps(t, "start-up", h.tr.prefixed("started "), want)
	addr := rec[0]["addr"]
	body := func(path string) (int, string) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, err := http.Get("http://" + addr + path)
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 || time.Now().After(deadline) {
					return resp.StatusCode, string(b)
				}
			} else if time.Now().After(deadline) {
				t.Fatalf("GET %s: %v", path, err)
			}
			time.Sleep(10 * time.Millisecond) // the scheduler's first wake-up
		}
	}
	if code, _ := body("/healthz"); code != 200 {
		t.Errorf("/healthz = %d with the loop running", code)
	}
	if code, text := body("/metrics"); code != 200 || !strings.Contains(text, "cronvisor_next_fire_timestamp_seconds{job=\"nap\"}") {
		t.Errorf("/metrics = %d:\n%s", code, text)
	}
}

func TestMetricsAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	h := newHarness(t, oneJob)
	h.opts.MetricsAddr = ln.Addr().String()
	if _, err := New(h.load(), h.opts); err == nil || !strings.Contains(err.Error(), "metrics: cannot listen on "+ln.Addr().String()) {
		t.Fatalf("New: %v, want the metrics address refused", err)
	}
	started, stopped := len(h.tr.prefixed("started ")), len(h.tr.prefixed("stopped "))
	if started != stopped {
		t.Errorf("%d parts started, %d stopped: %v / %v", started, stopped, h.tr.prefixed("started "), h.tr.prefixed("stopped "))
	}
}
