package archcheck

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFailsOnAPlantedImport is the test of the test: in a copy of
// the module, each case plants one file and the check must report it,
// naming the file, the import and the rule (or pass, where the plan
// allows it). Parts are named as the plan names them, so that the cases
// follow the folders when they move.
func TestCheckFailsOnAPlantedImport(t *testing.T) {
	plan, err := ReadPlan(filepath.Join(root, PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	folder := func(part string) string { return folderOf(t, plan, part) }
	ui, history, lock, daemon := folder("UI"), folder("History"), folder("Lock"), folder("Daemon")
	ctl, fleet, config := folder("Control"), folder("Fleet"), folder("Config")
	sqltest := firstFolder(t, plan.Beside, "Test servers")
	tests := []struct {
		name        string
		in, import_ string // the planted file's folder and its import
		want        []string
	}{
		{"never import", ui, history, []string{ui + "/zz_planted.go:3", ui + " imports " + history, "never rule UI → History"}},
		{"upward import", lock, daemon, []string{lock + "/zz_planted.go:3", lock + " imports " + daemon, "part Daemon stands above part Lock"}},
		{"never import through another package", ctl, fleet, []string{
			ctl + "/zz_planted.go:3", ctl + " imports " + fleet + ", which leads to " + history, "never rule Control → History"}},
		{"import down the map that its row does not list", ctl, config, []string{
			ctl + "/zz_planted.go:3", ctl + " imports " + config, "part Control may not import part Config"}},
		{"import of a harness", history, sqltest, []string{history + "/zz_planted.go:3", "a harness (Test servers)"}},
		{"package not on the map", "zz_newpart", lock, []string{"folder zz_newpart) is not on"}},
		{"sub-folder of a listed folder", lock + "/zz_backend", lock, nil},
	}
	dir := copyModule(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plant(t, dir, tc.in, path.Join(mod, tc.import_))
			problems, err := Check(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("problems:\n%s", strings.Join(problems, "\n"))
			if tc.want == nil && len(problems) > 0 {
				t.Errorf("want no problem, got:\n%s", strings.Join(problems, "\n"))
			}
			if tc.want != nil && !anyHasAll(problems, tc.want) {
				t.Errorf("want a problem naming %q, got:\n%s", tc.want, strings.Join(problems, "\n"))
			}
		})
	}
}

func anyHasAll(problems, want []string) bool {
	for _, p := range problems {
		n := 0
		for _, w := range want {
			if strings.Contains(p, w) {
				n++
			}
		}
		if n == len(want) {
			return true
		}
	}
	return false
}

func folderOf(t *testing.T, plan *Plan, part string) string {
	t.Helper()
	return firstFolder(t, plan.Parts, part)
}

func firstFolder(t *testing.T, parts []Part, name string) string {
	t.Helper()
	for _, p := range parts {
		if p.Name == name {
			return p.Folders[0]
		}
	}
	t.Fatalf("the plan has no part %s", name)
	return ""
}

// plant writes a file importing imp into folder in of the copy at dir,
// and takes it out (with the folder, if it made it) when the test ends,
// so that the cases share one copy.
func plant(t *testing.T, dir, in, imp string) {
	t.Helper()
	d := filepath.Join(dir, filepath.FromSlash(in))
	if _, err := os.Stat(d); err != nil {
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(d, "zz_planted.go")
	t.Cleanup(func() { os.Remove(file) })
	src := fmt.Sprintf("package %s\n\nimport _ %q\n", path.Base(in), imp)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyModule copies what the check reads (go.mod, the plan, the non-test
// Go files) to a temporary folder.
func copyModule(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return enterDir(root, p, d.Name())
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		keep := rel == "go.mod" || filepath.ToSlash(rel) == PlanFile ||
			(strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go"))
		if !keep {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
