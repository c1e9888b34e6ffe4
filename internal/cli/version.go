package cli

import (
	"cmp"
	"regexp"
	"runtime/debug"
	"strings"
)

// versionLine is what --version prints after "cronvisor ": the module
// version (or override, set with -ldflags "-X cronvisor/cli.Version=..."),
// then the VCS revision, its commit time and whether the tree had local
// changes, as `go build` in a checkout records them, then the Go version:
//
//	(devel) rev 1a2b3c4 2026-12-01T10:00:00Z (modified) go1.26.8
func versionLine(bi *debug.BuildInfo, override string) string {
	if bi == nil {
		if override == "" {
			return "(no build information)"
		}
		return override
	}
	parts := []string{cmp.Or(override, checkoutVersion(bi.Main.Version), "(devel)")}
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		parts = append(parts, "rev "+rev[:min(7, len(rev))])
	}
	if at != "" {
		parts = append(parts, at)
	}
	if modified == "true" {
		parts = append(parts, "(modified)")
	}
	if bi.GoVersion != "" {
		parts = append(parts, bi.GoVersion)
	}
	return strings.Join(parts, " ")
}

// pseudoVersion matches the end of a Go pseudo-version
// (v0.0.0-20261201100000-1a2b3c4d5e6f, v1.2.1-0.20261201100000-1a2b3c4d5e6f).
var pseudoVersion = regexp.MustCompile(`[-.][0-9]{14}-[0-9a-f]{12}$`)

// checkoutVersion is the module version as --version shows it. Since Go
// 1.24, go build in a clone stamps a pseudo-version (and +dirty) made of
// the revision and time that follow anyway: that is "(devel)", as the
// README shows, and (modified) says +dirty. A tag's version is kept.
func checkoutVersion(v string) string {
	v = strings.TrimSuffix(v, "+dirty")
	if pseudoVersion.MatchString(v) {
		return "(devel)"
	}
	return v
}

// buildVersion is versionLine of this binary.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return versionLine(bi, Version)
}
