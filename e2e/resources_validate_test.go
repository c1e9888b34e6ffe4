package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestResourceValidate: `cronvisor validate` refuses a job that uses an
// undeclared resource, a weight above the resource's size, and the
// other misuses of the keys, each at its file:line:col.
func TestResourceValidate(t *testing.T) {
	t.Parallel()
	head := "resources:\n  db: 2\njobs:\n  - name: a\n    schedule: '@hourly'\n    command: [/bin/true]\n    timeout: 1m\n"
	tests := []struct {
		name, body, want string
	}{
		{"undeclared resource", head + "    uses: [dbx]\n", `:9:12: uses: resource "dbx" is not declared under resources:`},
		{"weight above the size", head + "    uses: {db: 3}\n", ":9:16: uses: db: weight 3 is above its 2 slots"},
		{"weight below 1", head + "    uses: {db: 0}\n", ":9:16: uses: db: weight 0 is below 1"},
		{"size above 1000", strings.Replace(head, "db: 2", "db: 1001", 1), ":3:7: resources: db"},
		{"on_full unknown", head + "    uses: [db]\n    on_full: queue\n", `:10:14: on_full: "queue" is not one of skip, wait`},
		{"max_wait without wait", head + "    uses: [db]\n    max_wait: 5m\n", ":10:15: max_wait: is used only with on_full: wait"},
		{"max_wait not above 0", head + "    uses: [db]\n    on_full: wait\n    max_wait: 0s\n", ":11:15: max_wait: must be above 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t, tc.body)
			code, stdout, stderr := s.runCV(20*time.Second, "validate")
			if code != 1 {
				t.Fatalf("validate: exit %d, want 1; stdout %q stderr %q", code, stdout, stderr)
			}
			// Warnings aside (db used by no valid job, say): one error.
			var errs []string
			for _, l := range lines(stdout) {
				if !strings.Contains(l, ": warning: ") {
					errs = append(errs, l)
				}
			}
			if len(errs) != 1 || !strings.HasPrefix(errs[0], s.config+tc.want) {
				t.Errorf("validate printed %q, want one error %q...", clipped(stdout), s.config+tc.want)
			}
		})
	}
}

// TestResourcesDocExample: the jobs.yaml of docs/resources.md and of the
// README's resources section pass `cronvisor validate`, so the pages
// cannot teach keys the binary refuses.
func TestResourcesDocExample(t *testing.T) {
	t.Parallel()
	for _, page := range []struct{ path, section string }{
		{"../docs/resources.md", "## jobs.yaml"},
		{"../README.md", "## Resources"},
	} {
		doc, err := os.ReadFile(page.path)
		if err != nil {
			t.Fatal(err)
		}
		_, section, _ := strings.Cut(string(doc), "\n"+page.section+"\n")
		_, block, ok := strings.Cut(section, "```yaml\n")
		block, _, _ = strings.Cut(block, "```")
		if !ok || !strings.Contains(block, "resources:") || !strings.Contains(block, "uses:") {
			t.Fatalf("%s has no yaml block with resources: and uses: under %q", page.path, page.section)
		}
		s := newSandbox(t, block)
		code, stdout, stderr := s.runCV(20*time.Second, "validate")
		if code != 0 {
			t.Errorf("%s: validate: exit %d; stdout %q stderr %q\n%s", filepath.Base(page.path), code, stdout, stderr, block)
		}
	}
}
