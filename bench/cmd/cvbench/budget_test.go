package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSymbolPackage(t *testing.T) {
	tests := []struct{ name, want string }{
		{"runtime.mallocgc", "runtime"},
		{"github.com/prometheus/client_golang/prometheus.(*Registry).Gather", "github.com/prometheus/client_golang/prometheus"},
		{"gopkg.in/yaml%2ev3.(*parser).parse", "gopkg.in/yaml.v3"},
		{"type:.eq.[10]github.com/fsnotify/fsnotify.koekje", "github.com/fsnotify/fsnotify"},
		{"type:*cronvisor/config.Job", "cronvisor/internal/config"},
		{"go:itab.*gopkg.in/yaml%2ev3.TypeError,error", "gopkg.in/yaml.v3"},
		{"cronvisor/ui.render[go.shape.int]", "cronvisor/ui"},
		{"go:func.*", ""},
		{"type:func(int) string", ""},
	}
	for _, tt := range tests {
		if got := symbolPackage(tt.name); got != tt.want {
			t.Errorf("symbolPackage(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestAttributorGroup(t *testing.T) {
	a := attributor{main: "cronvisor", mods: []string{"modernc.org/sqlite", "modernc.org/libc", "github.com/prometheus/client_golang",
		"google.golang.org/protobuf", "github.com/charmbracelet/bubbletea", "gopkg.in/yaml.v3", "github.com/jackc/pgx/v5",
		"golang.org/x/sys", "example.com/odd"}}
	groups := budgetGroups()
	name := func(pkg string) string { return groups[a.group(pkg)].name }
	tests := []struct{ pkg, wantPrefix string }{
		{"modernc.org/libc/sys/types", "modernc.org/sqlite"},
		{"google.golang.org/protobuf/proto", "prometheus"},
		{"github.com/charmbracelet/bubbletea", "console"},
		{"gopkg.in/yaml.v3", "yaml"},
		{"github.com/jackc/pgx/v5/pgtype", "jackc/pgx"},
		{"golang.org/x/sys/unix", "golang.org/x"},
		{"crypto/internal/fips140/drbg", "std: crypto"},
		{"vendor/golang.org/x/crypto/chacha20poly1305", "std: crypto"},
		{"runtime", "Go runtime"},
		{"cronvisor/internal/store/history", "cronvisor's own"},
		{"example.com/odd/pkg", "other modules"},
		{"unknown.org/x", "other modules"},
		{"", "linker tables"},
	}
	for _, tt := range tests {
		if got := name(tt.pkg); len(got) < len(tt.wantPrefix) || got[:len(tt.wantPrefix)] != tt.wantPrefix {
			t.Errorf("group(%q) = %q, want %q…", tt.pkg, got, tt.wantPrefix)
		}
	}
}

func TestParseInitLine(t *testing.T) {
	pkg, v, ok := parseInitLine("init gopkg.in/yaml%2ev3 @119 ms, 8.6 ms clock, 25720 bytes, 276 allocs")
	if !ok || pkg != "gopkg.in/yaml.v3" || v != [3]float64{8.6, 25720, 276} {
		t.Fatalf("parseInitLine = %q, %v, %v", pkg, v, ok)
	}
	if _, _, ok := parseInitLine("cronvisor version 1.0"); ok {
		t.Fatal("a line that is not inittrace's was read")
	}
}

func TestMemStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status")
	status := "Name:\tcronvisor\nVmHWM:\t   24000 kB\nVmRSS:\t   22000 kB\nRssAnon:\t    3400 kB\nRssFile:\t   18500 kB\nRssShmem:\t     100 kB\n"
	if err := os.WriteFile(path, []byte(status), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := memStatus(path)
	if want := [nMem]int64{22000, 3400, 18500, 100, 24000}; err != nil || got != want {
		t.Fatalf("memStatus = %v, %v; want %v", got, err, want)
	}
}
