package crontab

import (
	"os"
	"strings"
	"testing"

	"cronvisor/internal/config"
)

// FuzzImport: whatever the crontab, the translation does not panic and
// its jobs.yaml validates with one job per translated entry.
func FuzzImport(f *testing.F) {
	for _, name := range []string{"testdata/user.crontab", "testdata/system.crontab"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b), strings.Contains(name, "system"))
		}
	}
	f.Add("* * * * * a%b\\%c%", false)
	f.Add("A = 'x'\n@daily root flock -n /l -c 'x'", true)
	f.Add("# a\rcomment\u2028\n* * * * * echo \x0b\u0085", false) // would end a YAML comment
	f.Fuzz(func(t *testing.T, text string, system bool) {
		res := Translate(Parse(text, system), Options{Home: homes})
		doc := Document(res, "fuzz")
		cfg, ps := config.ParseAs("jobs.yaml", doc, 0, 0)
		if cfg == nil {
			t.Fatalf("the output does not validate: %v\n%s", ps, doc)
		}
		if len(cfg.Jobs) != len(res.Jobs) {
			t.Fatalf("%d jobs in the file, %d translated", len(cfg.Jobs), len(res.Jobs))
		}
	})
}
