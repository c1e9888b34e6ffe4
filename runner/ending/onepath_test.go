package ending

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// terminalWrites are the methods that write a fire's terminal record:
// the Writers' own, the shared history's closing of lost hosts' runs,
// and the store's direct writes of a final row (and the names they had
// before there was one path, so that none comes back beside it).
var terminalWrites = map[string]bool{
	"WriteEnd": true, "WriteSkip": true, "CloseLostRuns": true,
	"Finish": true, "Conclude": true, "Interrupt": true, "EndRetries": true, "Finished": true, "Skipped": true,
}

// ownPackages may call their own terminal writes inside themselves: the
// writes' implementations and their building blocks.
var ownPackages = map[string]bool{"runner/ending": true, "internal/store/history": true, "internal/store/fleet": true}

// harnesses are not product: benchmarks' commands, end-to-end tests and
// the test harnesses.
var harnesses = map[string]bool{"bench": true, "e2e": true, "internal/harness": true}

// TestEveryTerminalWriteTakesThePath fails when product code outside the
// writers' own packages writes a terminal record other than through Path:
// such a write would tell no observer, which is how a run ended by its
// keeper once paged nobody and left `status` saying running.
func TestEveryTerminalWriteTakesThePath(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var bad []string
	calls := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || harnesses[filepath.ToSlash(rel)] {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkgDir := filepath.ToSlash(filepath.Dir(rel))
		for _, c := range terminalCalls(f) {
			calls++
			if ownPackages[pkgDir] {
				continue
			}
			bad = append(bad, fset.Position(c.Pos()).String()+": "+c.Sel.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Fatal("found no terminal write at all: the walk looks in the wrong place")
	}
	for _, b := range bad {
		t.Errorf("%s writes a terminal record outside ending.Path (call it through ending.Path instead)", b)
	}
}

// terminalCalls are f's method calls of a terminal write; a call of a
// package's function of the same name (proc.WriteEnd, the keeper's end
// file) is not one.
func terminalCalls(f *ast.File) []*ast.SelectorExpr {
	imported := map[string]bool{}
	for _, im := range f.Imports {
		name := strings.Trim(im.Path.Value, `"`)
		name = name[strings.LastIndex(name, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imported[name] = true
	}
	var out []*ast.SelectorExpr
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !terminalWrites[sel.Sel.Name] {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && imported[id.Name] {
			return true
		}
		out = append(out, sel)
		return true
	})
	return out
}

// TestTheWalkFindsABypass: a terminal write outside the path is found.
func TestTheWalkFindsABypass(t *testing.T) {
	src := `package recovery
import "cronvisor/internal/proc"
func f(s store, e end) { s.WriteEnd(ctx, e); proc.WriteEnd("p", e, true); s.Other() }`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := terminalCalls(f)
	if len(got) != 1 || got[0].Sel.Name != "WriteEnd" {
		t.Fatalf("terminalCalls = %d calls; want the one s.WriteEnd", len(got))
	}
}
