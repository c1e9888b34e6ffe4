package archcheck

import (
	"bufio"
	"fmt"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Import is one import of a module package by a file outside tests.
type Import struct {
	Pos    string // file:line, relative to the module's root
	Folder string // the imported package's folder in the module
}

// Graph is the module's packages by folder ("." for the root) with the
// imports of other module packages that their non-test files make.
type Graph struct {
	Module   string
	Packages map[string][]Import
}

// Folders returns the packages' folders, sorted.
func (g *Graph) Folders() []string {
	fs := make([]string, 0, len(g.Packages))
	for f := range g.Packages {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	return fs
}

// ReadGraph parses the imports of every Go file of the module at root
// (go/parser, imports only: no build and no network), keeping the files
// that this platform's build would compile. Folders that hold a module
// of their own, testdata and hidden folders are not the module's.
func ReadGraph(root string) (*Graph, error) {
	mod, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	g := &Graph{Module: mod, Packages: map[string][]Import{}}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return enterDir(root, path, d.Name())
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if ok, err := build.Default.MatchFile(filepath.Dir(path), d.Name()); err != nil || !ok {
			return err
		}
		return g.addFile(fset, root, path)
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// enterDir says whether the walk goes into a folder: not into hidden
// ones, testdata, or another module.
func enterDir(root, path, name string) error {
	if path == root {
		return nil
	}
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return filepath.SkipDir
	}
	return nil
}

func (g *Graph) addFile(fset *token.FileSet, root, path string) error {
	f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return err
	}
	folder := filepath.ToSlash(filepath.Dir(rel))
	imps := g.Packages[folder]
	for _, spec := range f.Imports {
		ip, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return err
		}
		to, ok := g.folderOf(ip)
		if !ok {
			continue
		}
		pos := fmt.Sprintf("%s:%d", filepath.ToSlash(rel), fset.Position(spec.Pos()).Line)
		imps = append(imps, Import{Pos: pos, Folder: to})
	}
	g.Packages[folder] = imps
	return nil
}

// folderOf turns an import path of the module into its folder.
func (g *Graph) folderOf(importPath string) (string, bool) {
	if importPath == g.Module {
		return ".", true
	}
	rest, ok := strings.CutPrefix(importPath, g.Module+"/")
	return rest, ok
}

func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}
