package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/config/crontab"
)

// exitUntranslated is import's exit code when some lines were not
// translated (the contract's 3).
const exitUntranslated = 3

func newImport(g *globals) *cobra.Command {
	imp := &cobra.Command{
		Use:   "import",
		Short: "Translate another scheduler's jobs into jobs.yaml",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("cannot import from %q: crontab is the format known (cronvisor import crontab FILE)", args[0])
			}
			return usageError("import what? cronvisor import crontab [FILE|-]")
		},
	}
	var system, write bool
	ct := &cobra.Command{
		Use:   "crontab [FILE|-]",
		Short: "Translate a crontab into jobs.yaml (stdout, or merged into --config with --write)",
		Long: `Translate a crontab into jobs.yaml entries. The lines not translated (@reboot,
a MAILTO cronvisor cannot honour, bad lines) are listed on stderr as LINE: why;
exit 0 when everything was translated, 3 when some lines were not.

FILE is a user crontab (crontab -l), or the system format with a user field:
/etc/crontab and files under /etc/cron.d/ are read so, and --system reads any
file so; without --system, a text whose entries name a user in column 6 is
read so too, and said so (--system=false reads it as a user crontab). Without FILE, or with -, the crontab is read from stdin.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError("expected at most one FILE, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "-"
			if len(args) == 1 {
				path = args[0]
			}
			// Told nothing, import looks at the text as well as the path:
			// a system crontab read as a user one runs "root cd / && ...".
			detect := !cmd.Flags().Changed("system") && !isSystemCrontab(path)
			return importCrontab(g, cmd.InOrStdin(), path, importMode{system: system || isSystemCrontab(path), detect: detect, write: write})
		},
	}
	ct.Flags().BoolVar(&system, "system", false, "the file has a user field after the schedule (/etc/crontab format); default: told by the path and the text")
	ct.Flags().BoolVar(&write, "write", false, "add the jobs to the --config file instead of printing them")
	ct.SilenceUsage, ct.SilenceErrors = true, true
	imp.AddCommand(ct)
	return imp
}

// isSystemCrontab tells the system crontabs by their place.
func isSystemCrontab(path string) bool {
	abs, err := filepath.Abs(path)
	return err == nil && (abs == "/etc/crontab" || strings.HasPrefix(abs, "/etc/cron.d/"))
}

// importMode is how import reads and writes: system selects the format
// with a user field; detect lets the text say it is one.
type importMode struct{ system, detect, write bool }

func importCrontab(g *globals, stdin io.Reader, path string, mode importMode) error {
	write := mode.write
	var text []byte
	var err error
	source := path
	if path == "-" {
		text, err = io.ReadAll(stdin)
		source = "stdin"
	} else {
		text, err = os.ReadFile(path)
	}
	if err != nil {
		return exitCode(1, fmt.Errorf("read crontab: %w", err))
	}
	opt := crontab.Options{Home: homeDir}
	var existing *yaml.Node
	if write {
		if existing, opt.Taken, err = readForMerge(g.configPath); err != nil {
			return exitCode(1, err)
		}
	}
	tab := crontab.Parse(string(text), mode.system)
	if mode.detect && !mode.system {
		if users, ok := crontab.LooksSystem(tab, homeDir); ok {
			tab = crontab.Parse(string(text), true)
			fmt.Fprintf(g.stderr, "cronvisor: %s reads as a system crontab (a user field after the schedule: %s); imported as with --system (--system=false reads it as a user crontab)\n",
				source, strings.Join(users, ", "))
		}
	}
	res := crontab.Translate(tab, opt)
	fmt.Fprint(g.stderr, crontab.Report(res.Problems))
	if !write {
		_, _ = g.stdout.Write(crontab.Document(res, source))
	} else if err := writeMerged(g, existing, res, source); err != nil {
		return err
	}
	if len(res.Problems) > 0 {
		return exitCode(exitUntranslated, nil)
	}
	return nil
}

// homeDir is where cron starts a user's jobs; "" is the user running
// the import, whose crontab a user crontab is taken to be.
func homeDir(name string) (string, bool) {
	var u *user.User
	var err error
	if name == "" {
		u, err = user.Current()
	} else {
		u, err = user.Lookup(name)
	}
	if err != nil {
		return "", false
	}
	return u.HomeDir, true
}

// readForMerge reads the file --write adds to and the job names it holds;
// a missing file is nil (it will be written whole). An invalid file is
// refused: what it means is not known, so neither is what a merge would.
func readForMerge(path string) (*yaml.Node, []string, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	cfg, ps := config.Parse(path, data)
	if cfg == nil {
		return nil, nil, fmt.Errorf("%s is not valid, not merging into it:\n%s", path, problemLines(ps))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%s: cannot add jobs to a file without a top-level mapping", path)
	}
	// A job's lock defaults to its name: imported names must not be an
	// existing job's lock either, or they would exclude each other.
	names := make([]string, 0, 2*len(cfg.Jobs))
	for _, j := range cfg.Jobs {
		names = append(names, j.Name, j.Lock)
	}
	return &doc, names, nil
}

// writeMerged adds the jobs to the file (or writes a new one), checks that
// the result validates, and replaces the file in one rename.
func writeMerged(g *globals, doc *yaml.Node, res crontab.Result, source string) error {
	var data []byte
	if doc == nil {
		data = crontab.Document(res, source)
	} else {
		root := doc.Content[0]
		jobs := jobsNode(root)
		jobs.Style = 0 // an empty flow list ([]) becomes a block list
		jobs.Content = append(jobs.Content, crontab.JobNodes(res)...)
		var b bytes.Buffer
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return exitCode(1, fmt.Errorf("encode %s: %w", g.configPath, err))
		}
		data = b.Bytes()
	}
	if cfg, ps := config.Parse(g.configPath, data); cfg == nil {
		return exitCode(1, fmt.Errorf("the merged file would not validate; %s left as it was:\n%s", g.configPath, problemLines(ps)))
	}
	if err := replaceFile(g.configPath, data); err != nil {
		return exitCode(1, err)
	}
	fmt.Fprintf(g.stderr, "%s: %d job(s) added\n", g.configPath, len(res.Jobs))
	return nil
}

// jobsNode returns the top-level jobs list, added when missing.
func jobsNode(root *yaml.Node) *yaml.Node {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "jobs" {
			if v := root.Content[i+1]; v.Kind == yaml.SequenceNode {
				return v
			}
			root.Content[i+1] = &yaml.Node{Kind: yaml.SequenceNode}
			return root.Content[i+1]
		}
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "jobs"}, seq)
	return seq
}

// replaceFile replaces path with data atomically, keeping the file's
// mode: a reader (a daemon watching it) sees the old file or the new one,
// never half of one.
func replaceFile(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := statedir.WriteFileAtomic(path, data, mode, true); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func problemLines(ps []config.Problem) string {
	var lines []string
	for _, p := range config.Errors(ps) {
		lines = append(lines, p.String())
	}
	return strings.Join(lines, "\n")
}
