package archcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// root is the module's root, seen from this package's folder.
const root = "../../.."

func TestTheTreeKeepsThePlan(t *testing.T) {
	problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestThePlanIsRead guards against a check that passes because it read
// nothing: the map, the harnesses and the never rules all have rows, and
// the graph holds the module's root package and its imports.
func TestThePlanIsRead(t *testing.T) {
	plan, err := ReadPlan(filepath.Join(root, PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Parts) < 10 || len(plan.Beside) == 0 || len(plan.Never) < 10 {
		t.Errorf("plan has %d parts, %d harnesses, %d never rules", len(plan.Parts), len(plan.Beside), len(plan.Never))
	}
	g, err := ReadGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Packages) < len(plan.Parts) || len(g.Packages["."]) == 0 {
		t.Errorf("graph of %s has %d packages, the root's imports %v", g.Module, len(g.Packages), g.Packages["."])
	}
}

// maxFuncLines is the longest a function outside tests may be.
const maxFuncLines = 60

func TestNoFunctionIsOverSixtyLines(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s is %d lines (at most %d)", fset.Position(fd.Pos()), fd.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
