package e2e

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/config"
)

// The unit and the production layout it installs (README, operations.md).
const (
	unitFile = "../contrib/systemd/cronvisor.service"
	prodJobs = "../contrib/systemd/jobs.yaml"
	prodEnv  = "../contrib/systemd/cronvisor.env"
)

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
	// validate reads the file the daemon will, with the same environment.
	pre, start := execLine(k["[Service]ExecStartPre"]), execLine(k["[Service]ExecStart"])
	if pre.bin != start.bin || pre.config == "" || pre.config != start.config || pre.command != "validate" {
		t.Errorf("ExecStartPre=%q: want %s --config %s validate", k["[Service]ExecStartPre"], start.bin, start.config)
	}
	if env := k["[Service]EnvironmentFile"]; !strings.HasPrefix(strings.TrimPrefix(env, "-"), "/etc/cronvisor/") {
		t.Errorf("EnvironmentFile=%q: want the secrets beside jobs.yaml in /etc/cronvisor", env)
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

// execCmd is an Exec line of the unit: binary, --config path, command.
type execCmd struct{ bin, config, command string }

func execLine(v string) execCmd {
	f := strings.Fields(v)
	var c execCmd
	for i := 0; i < len(f); i++ {
		switch {
		case i == 0:
			c.bin = f[0]
		case f[i] == "--config" && i+1 < len(f):
			c.config = f[i+1]
			i++
		default:
			c.command = f[i]
		}
	}
	return c
}

// envFile reads a systemd EnvironmentFile's KEY=VALUE lines.
func envFile(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var vars []string
	for _, ln := range strings.Split(string(data), "\n") {
		ln = strings.TrimSpace(ln)
		if ln == "" || strings.HasPrefix(ln, "#") {
			continue
		}
		if k, _, ok := strings.Cut(ln, "="); !ok || k == "" {
			t.Fatalf("%s: %q is no KEY=VALUE line", path, ln)
		}
		vars = append(vars, ln)
	}
	return vars
}

// validate runs the built binary's validate on path with env on top of a
// copy of this environment that lacks the variables in unset.
func validate(t *testing.T, path string, env, unset []string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cvBin, "--config", path, "validate")
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(unset, func(u string) bool { return strings.HasPrefix(u, k+"=") }) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("validate %s: %v", path, err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestSystemdJobsValidate: the production jobs.yaml is valid for the
// built binary with cronvisor.env's variables, which name every ${VAR}
// it expands, and refused without them as operations.md quotes (the
// refusal ExecStartPre turns into a failed start).
func TestSystemdJobsValidate(t *testing.T) {
	vars := envFile(t, prodEnv)
	data, err := os.ReadFile(prodJobs)
	if err != nil {
		t.Fatal(err)
	}
	needed := map[string]bool{}
	for _, m := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`).FindAllStringSubmatch(string(data), -1) {
		needed[m[1]] = true
	}
	for name := range needed {
		if !slices.ContainsFunc(vars, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
			t.Errorf("%s expands ${%s}, which %s does not set", prodJobs, name, prodEnv)
		}
	}
	// Valid, and without a warning: an example to copy has none.
	valid := regexp.MustCompile(`^` + regexp.QuoteMeta(prodJobs) + `: valid, [1-9][0-9]* job\(s\)\n$`)
	if code, out := validate(t, prodJobs, vars, vars); code != 0 || !valid.MatchString(out) {
		t.Errorf("validate with %s: exit %d\n%s", prodEnv, code, out)
	}
	ops, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile("`/etc/cronvisor/jobs.yaml(:[0-9]+:[0-9]+: [^`]*)`").FindSubmatch(ops)
	if quoted == nil {
		t.Fatal("docs/operations.md quotes no refusal of /etc/cronvisor/jobs.yaml")
	}
	code, out := validate(t, prodJobs, nil, vars)
	if want := prodJobs + string(quoted[1]); code != 1 || !strings.Contains(out, want+"\n") {
		t.Errorf("validate without %s: exit %d\n%s\nwant exit 1 and the line docs/operations.md quotes: %s", prodEnv, code, out, want)
	}
}

// installBlock is the sh block of a doc that installs the unit, and what
// each of its `install` lines puts where: destination to source.
func installBlock(t *testing.T, doc string) (block string, installed map[string]string) {
	t.Helper()
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(data), -1) {
		if strings.Contains(b[1], "cronvisor.service /etc/systemd/system/") {
			block = b[1]
		}
	}
	if block == "" {
		t.Fatalf("%s: no sh block installs cronvisor.service", doc)
	}
	installed = map[string]string{}
	for _, ln := range strings.Split(block, "\n") {
		ln, _, _ = strings.Cut(ln, "#")
		f := strings.Fields(ln)
		if len(f) < 2 || f[0] != "sudo" || f[1] != "install" {
			continue
		}
		var args []string
		for i := 2; i < len(f); i++ {
			switch {
			case f[i] == "-m":
				i++
			case !strings.HasPrefix(f[i], "-"):
				args = append(args, f[i])
			}
		}
		if len(args) != 2 {
			t.Fatalf("%s: %q: want one source and one destination", doc, ln)
		}
		dst := args[1]
		if strings.HasSuffix(dst, "/") {
			dst += filepath.Base(args[0])
		}
		installed[dst] = args[0]
	}
	return block, installed
}

// TestSystemdInstallBlock: the README's block and operations.md's are
// one, install files that exist in the checkout (the binary aside) at
// the paths the unit reads, and the jobs.yaml they install is the
// production one, its state dir the unit's StateDirectory=.
func TestSystemdInstallBlock(t *testing.T) {
	readme, installed := installBlock(t, "../README.md")
	if ops, _ := installBlock(t, "../docs/operations.md"); ops != readme {
		t.Errorf("README's install block and docs/operations.md's differ:\n%s\n---\n%s", readme, ops)
	}
	for dst, src := range installed {
		if src == "cronvisor" { // the binary the README's Install builds
			continue
		}
		if _, err := os.Stat(filepath.Join("..", src)); err != nil {
			t.Errorf("the README installs %s as %s: %v", src, dst, err)
		}
	}
	k := unitKeys(t, unitFile)
	start := execLine(k["[Service]ExecStart"])
	for what, dst := range map[string]string{
		"the unit":           "/etc/systemd/system/cronvisor.service",
		"ExecStart's binary": start.bin,
		"jobs.yaml":          start.config,
		"EnvironmentFile=":   strings.TrimPrefix(k["[Service]EnvironmentFile"], "-"),
	} {
		if _, ok := installed[dst]; !ok {
			t.Errorf("the README installs nothing as %s (%s)", dst, what)
		}
	}
	if !regexp.MustCompile(`(?m)^sudo install -m 600 contrib/systemd/cronvisor\.env `).MatchString(readme) {
		t.Errorf("the README does not install cronvisor.env with mode 600: its secrets\n%s", readme)
	}
	if src := installed[start.config]; src != "contrib/systemd/jobs.yaml" {
		t.Errorf("the README installs %q as %s, want the production contrib/systemd/jobs.yaml", src, start.config)
	}
	cfg, problems := config.LoadForReading(prodJobs)
	if cfg == nil {
		t.Fatalf("%s: %v", prodJobs, problems)
	}
	if want := "/var/lib/" + k["[Service]StateDirectory"]; cfg.StateDir != want {
		t.Errorf("%s: state_dir %q, want %q (the unit's StateDirectory=)", prodJobs, cfg.StateDir, want)
	}
}
