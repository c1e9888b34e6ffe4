package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/config"
)

const unitFile = "../contrib/systemd/cronvisor.service"

// unitKeys reads a unit file's [Service] keys (the last value of each).
func unitKeys(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		default:
			k, v, _ := strings.Cut(line, "=")
			keys[section+k] = v
		}
	}
	return keys
}

// TestSystemdUnitKeys: the unit says what the daemon relies on.
func TestSystemdUnitKeys(t *testing.T) {
	k := unitKeys(t, unitFile)
	for key, want := range map[string]string{
		"[Service]Type":         "notify",
		"[Service]NotifyAccess": "main",
		"[Service]KillMode":     "process",
		"[Service]Restart":      "always",
		"[Service]KillSignal":   "SIGTERM",
		"[Service]ExecReload":   "/bin/kill -HUP $MAINPID",
		"[Install]WantedBy":     "multi-user.target",
	} {
		if k[key] != want {
			t.Errorf("%s=%q, want %q", key, k[key], want)
		}
	}
	if !strings.HasSuffix(k["[Service]ExecStart"], " daemon") {
		t.Errorf("ExecStart=%q does not start the daemon", k["[Service]ExecStart"])
	}
	if w, err := time.ParseDuration(k["[Service]WatchdogSec"]); err != nil || w <= 0 {
		t.Errorf("WatchdogSec=%q: %v", k["[Service]WatchdogSec"], err)
	}
	stop, err := time.ParseDuration(k["[Service]TimeoutStopSec"])
	if err != nil || stop <= config.DefaultShutdownGrace+config.DefaultKillGrace {
		t.Errorf("TimeoutStopSec=%q (%v) must exceed shutdown_grace plus kill_grace (%v)", k["[Service]TimeoutStopSec"], err, config.DefaultShutdownGrace+config.DefaultKillGrace)
	}
}

// TestSystemdUnitVerifies runs systemd-analyze verify on the unit, its
// binary pointed at the one under test: no warning at all (verify exits
// 0 on unknown keys, so its output is what tells).
func TestSystemdUnitVerifies(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed (apt-get install systemd); TestSystemdUnitKeys checks the keys")
	}
	data, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cronvisor.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(data), "/usr/local/bin/cronvisor", cvBin)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, tool, "verify", path).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
