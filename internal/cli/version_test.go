package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersionLine(t *testing.T) {
	vcs := func(rev, at, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "-compiler", Value: "gc"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: at}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name     string
		bi       *debug.BuildInfo
		override string
		want     string
	}{
		{"checkout with changes", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: vcs("1a2b3c4d5e6f", "2026-12-01T10:00:00Z", "true")}, "",
			"(devel) rev 1a2b3c4 2026-12-01T10:00:00Z (modified) go1.26.8"},
		{"clone since go1.24: a pseudo-version and +dirty", &debug.BuildInfo{GoVersion: "go1.26.8",
			Main:     debug.Module{Version: "v0.0.0-20261201100000-1a2b3c4d5e6f+dirty"},
			Settings: vcs("1a2b3c4d5e6f", "2026-12-01T10:00:00Z", "true")}, "",
			"(devel) rev 1a2b3c4 2026-12-01T10:00:00Z (modified) go1.26.8"},
		{"commit after a tag", &debug.BuildInfo{GoVersion: "go1.26.8",
			Main:     debug.Module{Version: "v1.2.1-0.20261201100000-1a2b3c4d5e6f"},
			Settings: vcs("1a2b3c4d5e6f", "2026-12-01T10:00:00Z", "false")}, "",
			"(devel) rev 1a2b3c4 2026-12-01T10:00:00Z go1.26.8"},
		{"tag with changes", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0+dirty"},
			Settings: vcs("1a2b3c4d5e6f", "2026-12-01T10:00:00Z", "true")}, "",
			"v1.2.0 rev 1a2b3c4 2026-12-01T10:00:00Z (modified) go1.26.8"},
		{"clean tagged build", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"},
			Settings: vcs("1a2b3c4d5e6f", "2026-12-01T10:00:00Z", "false")}, "",
			"v1.2.0 rev 1a2b3c4 2026-12-01T10:00:00Z go1.26.8"},
		{"go install module@version: no vcs", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}}, "",
			"v1.2.0 go1.26.8"},
		{"ldflags override", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "2.0-rc1",
			"2.0-rc1 go1.26.8"},
		{"no build information", nil, "", "(no build information)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionLine(tc.bi, tc.override); got != tc.want {
				t.Errorf("versionLine = %q, want %q", got, tc.want)
			}
		})
	}
}
