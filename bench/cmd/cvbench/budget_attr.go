package main

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// budgetGroups are the memory budget's rows: a name and the module path
// prefixes it takes, first match wins. std splits into crypto (the FIPS
// module's tables and its DRBG buffer) and the rest.
func budgetGroups() []struct {
	name     string
	prefixes []string
} {
	return []struct {
		name     string
		prefixes []string
	}{
		{"modernc.org/sqlite + libc (+ bigfft, strftime, humanize)", []string{"modernc.org/", "github.com/remyoudompheng/bigfft",
			"github.com/ncruces/go-strftime", "github.com/dustin/go-humanize"}},
		{"prometheus client_golang + client_model + common + procfs, protobuf", []string{"github.com/prometheus/",
			"google.golang.org/protobuf", "github.com/beorn7/perks", "github.com/munnerz/goautoneg", "github.com/cespare/xxhash"}},
		{"console: bubbletea, lipgloss, bubbles, x/ansi, termenv, uniseg, …", []string{"github.com/charmbracelet/",
			"github.com/muesli/", "github.com/lucasb-eyer/", "github.com/rivo/uniseg", "github.com/mattn/",
			"github.com/aymanbagabas/", "github.com/erikgeiser/", "github.com/xo/", "github.com/clipperhouse/",
			"github.com/atotto/clipboard", "github.com/sahilm/fuzzy"}},
		{"jackc/pgx (+ puddle, pgpassfile, pgservicefile)", []string{"github.com/jackc/"}},
		{"go-sql-driver/mysql (+ edwards25519)", []string{"github.com/go-sql-driver/", "filippo.io/edwards25519"}},
		{"redis/go-redis (+ rendezvous)", []string{"github.com/redis/", "github.com/dgryski/go-rendezvous"}},
		{"yaml", []string{"gopkg.in/yaml", "go.yaml.in/", "sigs.k8s.io/yaml"}},
		{"cobra + pflag", []string{"github.com/spf13/", "github.com/inconshreveable/"}},
		{"golang.org/x (sys, text, net, …)", []string{"golang.org/x/"}},
		{"std: crypto (crypto/*, vendor/golang.org/x/crypto)", []string{"crypto/", "vendor/golang.org/x/crypto/"}},
		{"Go runtime and the rest of std", []string{"(std)"}},
		{"cronvisor's own packages", []string{"(main)"}},
		{"other modules", []string{"(other)"}},
		{"linker tables without a package (go:func.*, typelinks, …)", []string{"(linker)"}},
	}
}

// attributor maps a package path to its budget group.
type attributor struct {
	main string   // the main module's path
	mods []string // the dependencies' module paths
}

func newAttributor(bin string) (attributor, error) {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return attributor{}, err
	}
	a := attributor{main: bi.Main.Path}
	for _, d := range bi.Deps {
		a.mods = append(a.mods, d.Path)
	}
	return a, nil
}

// module is the module path of pkg: "(main)", a dependency's path, a std
// package's own path, "(other)" for a package of no known module, or
// "(linker)" for "".
func (a attributor) module(pkg string) string {
	switch {
	case pkg == "":
		return "(linker)"
	case pkg == a.main || strings.HasPrefix(pkg, a.main+"/"):
		return "(main)"
	}
	best := ""
	for _, m := range a.mods {
		if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best != "" {
		return best
	}
	if first, _, _ := strings.Cut(pkg, "/"); !strings.Contains(first, ".") {
		return pkg // std, vendor/… included
	}
	return "(other)"
}

// group is the index in budgetGroups of pkg's group.
func (a attributor) group(pkg string) int {
	groups := budgetGroups()
	find := func(prefix string) int {
		for i, g := range groups {
			if g.prefixes[0] == prefix {
				return i
			}
		}
		return len(groups) - 1
	}
	mod := a.module(pkg)
	if strings.HasPrefix(mod, "(") {
		return find(mod)
	}
	if first, _, _ := strings.Cut(mod, "/"); !strings.Contains(first, ".") { // std
		if strings.HasPrefix(pkg, "crypto/") || strings.HasPrefix(pkg, "vendor/golang.org/x/crypto/") {
			return find("crypto/")
		}
		return find("(std)")
	}
	for i, g := range groups {
		for _, p := range g.prefixes {
			if !strings.HasPrefix(p, "(") && strings.HasPrefix(mod, p) {
				return i
			}
		}
	}
	return find("(other)")
}

// symbolPackage is the package path of a Go symbol name as go tool nm
// prints it ("" for the linker's own tables).
func symbolPackage(name string) string {
	for _, p := range []string{"type:.eq.", "type:.hash.", "type:", "go:itab.", "go:link."} {
		name = strings.TrimPrefix(name, p)
	}
	if strings.HasPrefix(name, "go:") {
		return ""
	}
	name = strings.TrimLeft(name, "*[]0123456789")
	if i := strings.IndexAny(name, "[( "); i >= 0 {
		name = name[:i]
	}
	slash := strings.LastIndexByte(name, '/')
	dot := strings.IndexByte(name[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	// The linker escapes a dot in the last path element (yaml%2ev3).
	return strings.ReplaceAll(name[:slash+1+dot], "%2e", ".")
}

// symbol is one sized symbol of the binary.
type symbol struct {
	addr, size uint64
	pkg        string
	bss        bool // in a section with no file bytes (.bss, .noptrbss)
}

// symbols lists bin's sized symbols (go tool nm -size), each with its
// package and whether it lies in a section without file bytes.
func symbols(bin string) ([]symbol, error) {
	out, err := exec.Command("go", "tool", "nm", "-size", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool nm: %w", err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var syms []symbol
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 {
			continue // undefined (U) symbols: no address, no size
		}
		addr, err1 := strconv.ParseUint(fs[0], 16, 64)
		size, err2 := strconv.ParseUint(fs[1], 10, 64)
		if err1 != nil || err2 != nil || size == 0 {
			continue
		}
		name := strings.Join(fs[3:], " ")
		s := symbol{addr: addr, size: size, pkg: symbolPackage(name)}
		for _, sec := range f.Sections {
			if sec.Flags&elf.SHF_ALLOC != 0 && addr >= sec.Addr && addr < sec.Addr+sec.Size {
				s.bss = sec.Type == elf.SHT_NOBITS
				break
			}
		}
		syms = append(syms, s)
	}
	return syms, sc.Err()
}
