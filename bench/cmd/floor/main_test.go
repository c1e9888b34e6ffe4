package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crontab")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	s, err := load(write(t, "17 * * * * /bin/true job-00000\n18 * * * * /bin/true job-00001\n"))
	if err != nil || len(s) != 2 {
		t.Fatalf("load = %d schedules, %v; want 2", len(s), err)
	}
	from := time.Date(2026, 12, 1, 12, 0, 0, 0, time.Local)
	if got, want := s[1].Next(from), from.Add(18*time.Minute); !got.Equal(want) {
		t.Errorf("second job's next fire = %v, want %v", got, want)
	}
	for name, tt := range map[string]struct{ text, want string }{
		"no command":       {"17 * * * *\n99 * * * * /bin/true\n", ":1: want five schedule fields"},
		"bad minute":       {"99 * * * * /bin/true\n", ":1: "},
		"no jobs":          {"", "no jobs"},
		"a bad later line": {"17 * * * * /bin/true\n61 * * * * /bin/true\n", ":2: "},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := load(write(t, tt.text)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("load: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestRunStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, write(t, "17 * * * * /bin/true job-00000\n")) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}
