package config

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// manyJobs returns a jobs.yaml with n hourly jobs, the shape of the
// daemon's 10,000-job start-up benchmark. With shellEnv the jobs give their
// command as a string and carry an env of their own, merged with the
// defaults' env.
func manyJobs(n int, shellEnv bool) []byte {
	var b strings.Builder
	b.WriteString("state_dir: state\nshutdown_grace: 10s\ndefaults:\n  timeout: 30s\n  overlap: skip\n  kill_grace: 1s\n")
	if shellEnv {
		b.WriteString("  env:\n    PATH: /usr/bin:/bin\n")
	}
	b.WriteString("jobs:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: job-%05d\n    schedule: \"%d * * * *\"\n", i, i%60)
		if shellEnv {
			fmt.Fprintf(&b, "    command: \"echo hi\"\n    env:\n      APP: app-%d\n      LEVEL: info\n", i%7)
		} else {
			b.WriteString("    command: [\"/bin/true\"]\n")
		}
	}
	return []byte(b.String())
}

// BenchmarkParse10k measures parsing 10,000 jobs, and reports as
// retained-MiB the heap the resulting Config keeps alive once the garbage
// of parsing is collected.
func BenchmarkParse10k(b *testing.B) {
	for _, bc := range []struct {
		name     string
		shellEnv bool
	}{{"argv", false}, {"shell-env", true}} {
		b.Run(bc.name, func(b *testing.B) {
			data := manyJobs(10000, bc.shellEnv)
			parse := func() *Config {
				cfg, ps := Parse("/srv/cron/jobs.yaml", data)
				if cfg == nil || len(cfg.Jobs) != 10000 || len(ps) != 0 {
					b.Fatalf("Parse: %d problems:\n%s", len(ps), lines(ps[:min(len(ps), 5)]))
				}
				return cfg
			}
			b.ReportAllocs()
			for b.Loop() {
				parse()
			}
			b.ReportMetric(retainedMiB(parse), "retained-MiB")
		})
	}
}

// retainedMiB is the growth of the live heap across f while its result is
// still referenced (and f, with what it captures, too).
func retainedMiB[T any](f func() T) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	runtime.KeepAlive(f)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
}

// BenchmarkLint10k measures linting the 10,000 jobs of BenchmarkParse10k,
// as `cronvisor validate` does.
func BenchmarkLint10k(b *testing.B) {
	cfg, ps := Parse(filepath.Join(b.TempDir(), "jobs.yaml"), manyJobs(10000, true))
	if cfg == nil {
		b.Fatalf("Parse:\n%s", lines(ps))
	}
	b.ReportAllocs()
	for b.Loop() {
		Lint(cfg, mondayNoon())
	}
}
