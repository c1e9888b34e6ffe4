package archcheck

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// floors is the package map of docs/architecture.md, top to bottom: a
// package imports only packages of floors below its own.
var floors = [][]string{
	{"cronvisor"}, // main.go
	{"cli"},
	{"daemon"},
	{"ui"},
	{"service"},
	{"ctl"},
	{"notify", "metrics", "outlog"},
	{"runner"},
	{"lastok"},
	{"owner"},
	{"recovery"},
	{"fleet"},
	{"history"},
	{"audit"},
	{"config"},
	{"crontab"},
	{"schedule"},
	{"lock"},
	{"proc"},
	{"ending"},
	{"run", "procfs", "cgroup", "clock", "statedir", "systemd", "exepages", "internal/ratelog", "internal/mask"},
}

// outsideTheMap are packages that are harnesses, not parts: benchmarks'
// commands and test servers, which may import anything.
var outsideTheMap = map[string]bool{"bench": true, "internal/redistest": true, "internal/sqltest": true,
	"internal/archcheck": true, "e2e": true, "internal/testlog": true}

const module = "cronvisor"

func short(path string) string {
	if path == module {
		return path
	}
	p := strings.TrimPrefix(path, module+"/")
	if strings.HasPrefix(p, "lock/") {
		return "lock" // the backends' folders and their list are part of lock
	}
	return p
}

func TestImportsPointDownThePackageMap(t *testing.T) {
	floorOf := map[string]int{}
	for i, f := range floors {
		for _, p := range f {
			floorOf[p] = i
		}
	}
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := short(p.ImportPath)
		if outsideTheMap[name] || strings.HasPrefix(name, "bench/") {
			continue
		}
		own, ok := floorOf[name]
		if !ok {
			t.Errorf("package %s is not on the package map (floors in this test and docs/architecture.md)", name)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if short(imp) == name {
				continue // within one part
			}
			if f, ok := floorOf[short(imp)]; ok && f <= own {
				t.Errorf("%s imports %s, which stands on its floor or above it", name, short(imp))
			}
		}
	}
}

func TestThePackageMapIsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range floors[1:] {
		for _, p := range f {
			if !strings.Contains(string(b), "`"+p+"`") {
				t.Errorf("docs/architecture.md does not name package `%s`", p)
			}
		}
	}
}

// maxFuncLines is the longest a function outside tests may be.
const maxFuncLines = 60

func TestNoFunctionIsOverSixtyLines(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "../.." {
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
