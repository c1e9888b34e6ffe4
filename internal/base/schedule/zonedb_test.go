package schedule

import (
	"archive/zip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// zoneDB loads zones from one zone database: the host's (Debian's tzdata in
// /usr/share/zoneinfo) or the one Go embeds (time/tzdata, the same file as
// GOROOT/lib/time/zoneinfo.zip). Both are tested because both are used:
// time.LoadLocation takes the host's and falls back to the embedded one.
type zoneDB struct {
	name string
	load func(zone string) (*time.Location, error)
}

// zoneDBs returns both databases; it fails the test when one is missing
// (test.sh installs tzdata).
func zoneDBs(t testing.TB) []zoneDB {
	t.Helper()
	const hostDir = "/usr/share/zoneinfo"
	if _, err := os.Stat(filepath.Join(hostDir, "UTC")); err != nil {
		t.Fatalf("the host zone database is missing (%v): install tzdata", err)
	}
	host := zoneDB{name: "host", load: func(zone string) (*time.Location, error) {
		data, err := os.ReadFile(filepath.Join(hostDir, zone))
		if err != nil {
			return nil, err
		}
		return time.LoadLocationFromTZData(zone, data)
	}}
	files, err := goZoneFiles()
	if err != nil {
		t.Fatalf("Go's zone database: %v", err)
	}
	embedded := zoneDB{name: "go", load: func(zone string) (*time.Location, error) {
		data, ok := files[zone]
		if !ok {
			return nil, os.ErrNotExist
		}
		return time.LoadLocationFromTZData(zone, data)
	}}
	return []zoneDB{host, embedded}
}

var goZones struct {
	once  sync.Once
	files map[string][]byte
	err   error
}

// goZoneFiles reads GOROOT/lib/time/zoneinfo.zip once per test binary.
func goZoneFiles() (map[string][]byte, error) {
	goZones.once.Do(func() {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			goZones.err = err
			return
		}
		zr, err := zip.OpenReader(filepath.Join(strings.TrimSpace(string(out)), "lib", "time", "zoneinfo.zip"))
		if err != nil {
			goZones.err = err
			return
		}
		defer zr.Close()
		goZones.files = map[string][]byte{}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				goZones.err = err
				return
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				goZones.err = err
				return
			}
			goZones.files[f.Name] = data
		}
	})
	return goZones.files, goZones.err
}

func mustLoad(t testing.TB, db zoneDB, zone string) *time.Location {
	t.Helper()
	loc, err := db.load(zone)
	if err != nil {
		t.Fatalf("%s database: zone %q: %v", db.name, zone, err)
	}
	return loc
}
