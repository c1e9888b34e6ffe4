package e2e

import (
	"context"
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

const cliJobs = `jobs:
  - {name: sync_orders, schedule: "0 10 * * *", timezone: UTC, command: "true", timeout: 1m}
  - {name: sync_users, schedule: "@hourly", command: "true", timeout: 1m}
  - {name: backup, schedule: "@daily", command: "echo dialing >&2; echo 'connection refused' >&2; exit 3", timeout: 1m}
`

// completions asks the binary's hidden __complete command (the protocol
// cobra's bash, zsh and fish scripts speak) for the candidates of args.
func (s *sandbox) completions(args ...string) []string {
	s.t.Helper()
	code, stdout, stderr := s.runCV(10*time.Second, append([]string{"__complete"}, args...)...)
	ls := lines(stdout)
	if code != 0 || len(ls) == 0 || ls[len(ls)-1] != ":4" {
		s.t.Fatalf("__complete %q: exit %d, stdout %q, stderr %q; want candidates and :4 (no file completion)", args, code, stdout, stderr)
	}
	return ls[:len(ls)-1]
}

func TestCompletionJobNames(t *testing.T) {
	s := newSandbox(t, cliJobs)
	all := []string{"sync_orders", "sync_users", "backup"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", ""}, all},
		{[]string{"run", "sync_"}, []string{"sync_orders", "sync_users"}},
		{[]string{"run", "backup", ""}, nil}, // one name only
		{[]string{"next", "b"}, []string{"backup"}},
		{[]string{"trigger", ""}, all},
		{[]string{"logs", ""}, all},
		{[]string{"kill", ""}, all},
		{[]string{"pause", ""}, all},
		{[]string{"pause", "backup", ""}, []string{"sync_orders", "sync_users"}},
		{[]string{"resume", "sync_users", ""}, []string{"sync_orders", "backup"}},
		{[]string{"status", ""}, all},
		{[]string{"history", "--job", ""}, all},
		{[]string{"history", "--job", "sync_o"}, []string{"sync_orders"}},
		{[]string{"history", "--outcome", "ti"}, []string{"timeout"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if got := s.completions(tc.args...); !slices.Equal(got, tc.want) {
				t.Errorf("candidates %q, want %q", got, tc.want)
			}
		})
	}
	// A file being edited (here: invalid) still offers its names.
	if err := os.WriteFile(s.config, []byte("state_dir: state\njobs:\n  - {name: half_done, schedule: \"bad\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := s.completions("run", ""); !slices.Equal(got, []string{"half_done"}) {
		t.Errorf("invalid file: candidates %q, want [half_done]", got)
	}
}

func TestCompletionScripts(t *testing.T) {
	s := newSandbox(t, cliJobs)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, stdout, stderr := s.runCV(10*time.Second, "completion", shell)
		if code != 0 || !strings.Contains(stdout, "__complete") {
			t.Fatalf("completion %s: exit %d, stderr %q; want a script speaking __complete", shell, code, stderr)
		}
		script := filepath.Join(s.dir, "cronvisor."+shell)
		if err := os.WriteFile(script, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		if shell != "bash" {
			continue
		}
		if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
			t.Fatalf("bash -n: %v\n%s", err, out)
		}
		s.bashCompletes(script)
	}
}

// bashCompletes runs the bash script's completion function as bash would
// on "cronvisor --config F run sync_<TAB>", where bash-completion (which
// the script needs) is installed; elsewhere bash -n above is the check.
func (s *sandbox) bashCompletes(script string) {
	const lib = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(lib); err != nil {
		s.t.Logf("%s absent: the bash script is checked by bash -n only", lib)
		return
	}
	prog := `source "$1"; source "$2"
COMP_WORDS=("$3" --config "$4" run sync_); COMP_CWORD=4
COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
__start_cronvisor 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"`
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "-c", prog, "bash", lib, script, cvBin, s.config).Output()
	if got := lines(string(out)); err != nil || !slices.Equal(got, []string{"sync_orders", "sync_users"}) {
		s.t.Errorf("bash completion of 'run sync_': %q (%v), want sync_orders and sync_users", got, err)
	}
}

func TestHelpJobsYAMLListsEveryKey(t *testing.T) {
	s := newSandbox(t, "")
	code, stdout, stderr := s.runCV(10*time.Second, "help", "jobs.yaml")
	if code != 0 {
		t.Fatalf("help jobs.yaml: exit %d, stderr %q", code, stderr)
	}
	// The sections and their key rows, as printed.
	shown := map[string][]string{}
	section, afterBlank := "", false
	for _, l := range strings.Split(stdout, "\n") {
		switch {
		case strings.HasPrefix(l, "  ") && section != "":
			shown[section] = append(shown[section], strings.Fields(l)[0])
		case afterBlank && strings.Contains(l, ": "): // "jobs[]: each job"
			section, _, _ = strings.Cut(l, ": ")
		}
		afterBlank = l == ""
	}
	for _, sec := range config.Reference() {
		name := cmpOrTop(sec.Path)
		var want []string
		for _, k := range sec.Keys {
			want = append(want, k.Name)
		}
		if !slices.Equal(shown[name], want) {
			t.Errorf("section %q shows %q, want the decoder's keys %q", name, shown[name], want)
		}
		delete(shown, name)
	}
	for name, keys := range shown {
		t.Errorf("help shows section %q (%q) that the decoder does not have", name, keys)
	}
}

func cmpOrTop(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

func TestVersionFromBuildInfo(t *testing.T) {
	s := newSandbox(t, "")
	code, stdout, _ := s.runCV(10*time.Second, "--version")
	info, err := exec.Command("go", "version", "-m", cvBin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "cronvisor " + expectedVersion(t, string(info))
	if code != 0 || strings.TrimSpace(stdout) != want {
		t.Errorf("--version: exit %d, %q; want %q (from go version -m)", code, stdout, want)
	}
}

// expectedVersion is the --version line for the build information that
// go version -m prints.
func expectedVersion(t *testing.T, info string) string {
	settings := map[string]string{}
	var goVersion, mod string
	for i, l := range lines(info) {
		f := strings.Fields(l)
		switch {
		case i == 0:
			goVersion = f[len(f)-1]
		case len(f) >= 3 && f[0] == "mod":
			mod = f[2]
		case len(f) == 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				settings[k] = v
			}
		}
	}
	if mod = strings.TrimSuffix(mod, "+dirty"); regexp.MustCompile(`[-.][0-9]{14}-[0-9a-f]{12}$`).MatchString(mod) {
		mod = "(devel)" // a pseudo-version restates the revision and time that follow
	}
	parts := []string{mod}
	if r := settings["vcs.revision"]; r != "" {
		parts = append(parts, "rev "+r[:7])
	}
	if v := settings["vcs.time"]; v != "" {
		parts = append(parts, v)
	}
	if settings["vcs.modified"] == "true" {
		parts = append(parts, "(modified)")
	}
	return strings.Join(append(parts, goVersion), " ")
}

// TestVersionFromVCS builds a clone of this checkout's HEAD with VCS
// stamping on (a worktree or GOFLAGS=-buildvcs=false would leave it off)
// and checks the revision, its time and the modified flag.
func TestVersionFromVCS(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds cronvisor twice from a clone; runs in the full suite")
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("not in a git checkout: %v", err)
	}
	head := gitOut(t, strings.TrimSpace(string(root)), "rev-parse", "HEAD")
	at := gitOut(t, strings.TrimSpace(string(root)), "show", "-s", "--format=%cd", "--date=format-local:%Y-%m-%dT%H:%M:%SZ", "HEAD")
	clone := filepath.Join(t.TempDir(), "src")
	if out, err := exec.Command("git", "clone", "-q", "--depth", "1", "file://"+strings.TrimSpace(string(root)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	bin := filepath.Join(t.TempDir(), "cronvisor") // outside the clone: an untracked file counts as a change
	build := func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=true", "-o", bin, ".")
		cmd.Dir, cmd.Env = clone, append(os.Environ(), "GOFLAGS=", "TZ=UTC")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	clean := regexp.MustCompile(`^cronvisor \S+ rev ` + head[:7] + ` ` + regexp.QuoteMeta(at) + ` go1\.\S+$`)
	if got := build(); !clean.MatchString(got) {
		t.Errorf("--version of a clean build: %q, want it to match %s", got, clean)
	}
	if err := os.WriteFile(filepath.Join(clone, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := build(); !strings.Contains(got, "rev "+head[:7]+" "+at+" (modified) go1.") {
		t.Errorf("--version of a modified tree: %q, want rev %s %s (modified)", got, head[:7], at)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "TZ=UTC")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %q: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestBinaryDropsUnusedMethods guards the linker's dead-method elimination:
// one reachable call of text/template (cobra's version template was one)
// or of reflect's Method with a computed name makes the linker keep every
// exported method of every type, which for go-redis alone is hundreds of
// commands, megabytes of binary and of resident pages. cronvisor calls a
// handful of Redis commands.
func TestBinaryDropsUnusedMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs go tool nm on the binary; runs in the full suite")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "tool", "nm", cvBin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	var kept []string
	for _, l := range lines(string(out)) {
		if f := strings.Fields(l); len(f) == 3 && f[1] == "T" && strings.HasPrefix(f[2], "github.com/redis/go-redis/v9.cmdable.") {
			kept = append(kept, strings.TrimPrefix(f[2], "github.com/redis/go-redis/v9.cmdable."))
		}
	}
	if len(kept) > 50 {
		t.Errorf("the binary keeps %d of go-redis's command methods (e.g. %v); something reachable disables the linker's method elimination (go build -ldflags=-dumpdep shows who reaches text/template or reflect.Value.MethodByName)",
			len(kept), kept[:5])
	}
}
