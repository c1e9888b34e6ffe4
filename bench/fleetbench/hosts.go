package fleetbench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// fleet is the daemons of a measurement.
type fleet struct {
	bin     string
	configs []string
	cmds    []*exec.Cmd
	logs    []string
	started time.Time
}

// jobsYAML is a host's jobs.yaml: the locks and the history on url.
func jobsYAML(cfg Config, url, state string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "state_dir: %s\nshutdown_grace: 5s\n", state)
	fmt.Fprintf(&b, "lock_backend: {type: postgres, url: %q}\nhistory_backend: {type: postgres, url: %q}\njobs:\n", url, url)
	for i := range cfg.Jobs {
		fmt.Fprintf(&b, "  - name: job-%02d\n    schedule: \"@every %s\"\n    command: \"true\"\n    timeout: 1m\n", i+1, cfg.Every)
	}
	return b.String()
}

// startHosts starts cfg.Hosts daemons, host-01 on, each in a UTS
// namespace of its own, and waits for each to say it started.
func startHosts(cfg Config, url string) (*fleet, error) {
	f := &fleet{bin: cfg.Bin, started: time.Now()}
	for i := range cfg.Hosts {
		name := fmt.Sprintf("host-%02d", i+1)
		dir, err := mkdir(filepath.Join(cfg.Dir, name))
		if err != nil {
			return f, err
		}
		config := filepath.Join(dir, "jobs.yaml")
		if err := os.WriteFile(config, []byte(jobsYAML(cfg, url, filepath.Join(dir, "state"))), 0o644); err != nil {
			return f, err
		}
		if err := f.start(name, dir, config); err != nil {
			return f, err
		}
	}
	for i, l := range f.logs {
		if err := waitLog(l, `"msg":"cronvisor started"`, 30*time.Second); err != nil {
			return f, fmt.Errorf("fleetbench: host %d: %w", i+1, err)
		}
	}
	return f, nil
}

// start runs one daemon as host name, in its own process group.
func (f *fleet) start(name, dir, config string) error {
	log := filepath.Join(dir, "daemon.log")
	out, err := os.Create(log)
	if err != nil {
		return err
	}
	defer out.Close()
	script := fmt.Sprintf("hostname %s && exec '%s' --config '%s' daemon --log-format json", name, f.bin, config)
	cmd := exec.Command("unshare", "--uts", "sh", "-c", script)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("fleetbench: start %s: %w", name, err)
	}
	f.configs, f.cmds, f.logs = append(f.configs, config), append(f.cmds, cmd), append(f.logs, log)
	return nil
}

// waitLog waits for want in the file at path.
func waitLog(path, want string, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(want)) {
			return nil
		}
	}
	b, _ := os.ReadFile(path)
	return fmt.Errorf("no %s within %v in %s:\n%s", want, timeout, path, b)
}

// audit is the summary line of `cronvisor audit --since since` on the
// first host.
func (f *fleet) audit(since time.Duration) string {
	if len(f.configs) == 0 {
		return "no host"
	}
	cmd := exec.Command(f.bin, "--config", f.configs[0], "audit", "--since", fmt.Sprintf("%dm", int(since.Minutes())+1))
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	line := lines[len(lines)-1]
	if err != nil {
		line += " (" + err.Error() + ")"
	}
	return line
}

// stop ends every daemon: SIGTERM, then SIGKILL of its process group
// (and of what it left there) after 20 s.
func (f *fleet) stop() {
	if f == nil {
		return
	}
	for _, c := range f.cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, c := range f.cmds {
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Until(deadline)):
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			<-done
		}
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) // a keeper left in its group
	}
}
