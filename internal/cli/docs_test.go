package cli

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// docKeys maps "section/key" (section as `help jobs.yaml` titles it) to
// the key's default as the help prints it ("-" for none).
type docKeys map[string]string

// helpKeys runs `cronvisor help jobs.yaml` and reads its key lines back.
func helpKeys(t *testing.T) docKeys {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Execute([]string{"help", "jobs.yaml"}, &out, &errb); code != 0 {
		t.Fatalf("help jobs.yaml: exit %d: %s", code, errb.String())
	}
	keys, section := docKeys{}, ""
	title := regexp.MustCompile(`^(\S[^:]*): `)
	for _, ln := range strings.Split(out.String(), "\n") {
		if m := title.FindStringSubmatch(ln); m != nil && !strings.HasPrefix(ln, "jobs.yaml:") {
			section = m[1]
			continue
		}
		if section == "" || !strings.HasPrefix(ln, "  ") {
			continue
		}
		f := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(ln), 3)
		if len(f) < 3 {
			t.Fatalf("help line %q: want key, default and doc", ln)
		}
		keys[section+"/"+f[0]] = f[1]
	}
	if len(keys) == 0 {
		t.Fatal("help jobs.yaml listed no keys")
	}
	return keys
}

// tableCells splits a markdown table row on the pipes that are not
// escaped, trimming each cell.
func tableCells(row string) []string {
	var cells []string
	var cur strings.Builder
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// configDocKeys reads the key tables of docs/configuration.md's "Key
// reference": one per section, jobs[] with a column saying which keys
// defaults accepts.
func configDocKeys(t *testing.T, text string) docKeys {
	t.Helper()
	start := strings.Index(text, "\n## Key reference\n")
	if start < 0 {
		t.Fatal(`docs/configuration.md has no "## Key reference"`)
	}
	text = text[start+1:]
	if end := strings.Index(text[3:], "\n## "); end >= 0 {
		text = text[:end+3]
	}
	keys, section := docKeys{}, ""
	for _, ln := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(ln, "### "); ok {
			section = strings.Trim(h, "`")
			continue
		}
		if !strings.HasPrefix(ln, "| `") || section == "" {
			continue
		}
		c := tableCells(ln)
		def := strings.Trim(c[2], "`")
		if def == "—" {
			def = "-"
		}
		name := strings.Trim(c[0], "`")
		keys[section+"/"+name] = def
		if section == "jobs[]" && c[3] == "yes" {
			keys["defaults/"+name] = def
		}
	}
	return keys
}

// disagree lists, sorted, what one side has that the other lacks or
// gives another default.
func disagree(help, docs docKeys) []string {
	var diffs []string
	for k, d := range help {
		switch dd, ok := docs[k]; {
		case !ok:
			diffs = append(diffs, k+": listed by help jobs.yaml, not in docs/configuration.md")
		case dd != d:
			diffs = append(diffs, k+": default "+d+" in help jobs.yaml, "+dd+" in docs/configuration.md")
		}
	}
	for k := range docs {
		if _, ok := help[k]; !ok {
			diffs = append(diffs, k+": in docs/configuration.md, not listed by help jobs.yaml")
		}
	}
	slices.Sort(diffs)
	return diffs
}

// TestHelpJobsMatchesDocs holds docs/configuration.md's key tables to
// `cronvisor help jobs.yaml` (and so to the decoder, see config's
// TestReferenceMatchesDecoder): the same keys in each section, the same
// defaults, both ways.
func TestHelpJobsMatchesDocs(t *testing.T) {
	text, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	help := helpKeys(t)
	if diffs := disagree(help, configDocKeys(t, string(text))); len(diffs) > 0 {
		t.Fatalf("help jobs.yaml and docs/configuration.md disagree:\n%s", strings.Join(diffs, "\n"))
	}
	// The check must be able to fail: a row taken out of the doc, or one
	// too many, is reported.
	row := regexp.MustCompile("(?m)^\\| `retry_backoff_max` .*\n")
	if !row.MatchString(string(text)) {
		t.Fatal("docs/configuration.md has no retry_backoff_max row to take out")
	}
	cut := configDocKeys(t, row.ReplaceAllString(string(text), ""))
	if got := disagree(help, cut); len(got) != 2 { // jobs[] and defaults
		t.Errorf("without the retry_backoff_max row: %q, want it missing from jobs[] and defaults", got)
	}
	extra := strings.Replace(string(text), "| `name` |", "| `not_a_key` | string | — | no | x |\n| `name` |", 1)
	if got := disagree(help, configDocKeys(t, extra)); len(got) != 1 {
		t.Errorf("with a row too many: %q, want it reported", got)
	}
}

// commandFlags lists "command/--flag" for every flag of every visible
// command, its path without the root's name ("" for the root itself),
// and the root's persistent flags as "*/--flag".
func commandFlags(c *cobra.Command, into map[string]bool) {
	path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), "cronvisor"), " ")
	c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" && !f.Hidden {
			into[path+"/--"+f.Name] = true
		}
	})
	if !c.HasParent() {
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { into["*/--"+f.Name] = true })
	}
	for _, sub := range c.Commands() {
		if !sub.Hidden && sub.Name() != "help" {
			commandFlags(sub, into)
		}
	}
}

// TestCommandsDocListsEveryFlag holds docs/commands.md's flag table to the
// commands: every flag of every command has its row, and every row names
// a flag its command has.
func TestCommandsDocListsEveryFlag(t *testing.T) {
	text, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	commandFlags(newRoot(&globals{}), have)
	documented := map[string]bool{}
	flag := regexp.MustCompile(`--[a-z][a-z-]*`)
	_, table, _ := strings.Cut(string(text), "\n## Flags\n")
	table, _, _ = strings.Cut(table, "\n## ")
	for _, ln := range strings.Split(table, "\n") {
		if !strings.HasPrefix(ln, "| ") || strings.HasPrefix(ln, "| command") || strings.HasPrefix(ln, "| ---") {
			continue
		}
		c := tableCells(ln)
		var cmds []string
		if c[0] == "every command" {
			cmds = []string{"*"}
		}
		for _, name := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(c[0], -1) {
			cmds = append(cmds, strings.TrimPrefix(strings.TrimPrefix(name[1], "cronvisor"), " "))
		}
		for _, cmd := range cmds {
			for _, f := range flag.FindAllString(c[1], -1) {
				documented[cmd+"/"+f] = true
			}
		}
	}
	for k := range have {
		if !documented[k] {
			t.Errorf("%s: a flag with no row in docs/commands.md's Flags table", k)
		}
	}
	for k := range documented {
		if !have[k] {
			t.Errorf("%s: in docs/commands.md's Flags table, but no command has it", k)
		}
	}
}
