package semaphore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/redis"
	"cronvisor/internal/lock/sql"
)

// The helper process's environment: the backend and its address.
const (
	holdEnv = "SEMTEST_HOLD"
	urlEnv  = "SEMTEST_URL"
)

var holdBackends = map[string]lock.Backend{"redis": redis.Redis, "mysql": sql.MySQL, "postgres": sql.Postgres}

// holdAndBlock is the helper process: a supervisor that takes slot db/0
// as job "dead", says so on stdout and waits to be killed.
func holdAndBlock() {
	s := lock.Settings{URL: os.Getenv(urlEnv), TTL: redisTTL}
	sm, err := Open(holdBackends[os.Getenv(holdEnv)], s, map[string]int{"db": 1})
	if err == nil {
		_, err = sm.Take(context.Background(), req("dead", "db", 1))
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("held")
	select {}
}

// startHolder runs the helper process on s in a process group of its
// own, and returns once it holds the slot.
func startHolder(ctx context.Context, t *testing.T, kind string, s lock.Settings) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+kind, urlEnv+"="+s.URL)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locktest.KillGroup(cmd.Process.Pid); _ = cmd.Wait() })
	if line, err := locktest.ReadLine(ctx, out); line != "held" {
		t.Fatalf("holder: %q, %v", line, err)
	}
	return cmd
}

// A slot of a network backend whose holder dies unannounced (SIGKILL of
// its supervisor) is freed by the backend: an SQL slot as its session's
// connection closes, a Redis slot once its lease, no longer renewed,
// lapses after its ttl.
func TestNetworkSlotFreedWhenItsHolderDies(t *testing.T) {
	for _, tc := range []struct {
		kind     string
		settings func(*testing.T) lock.Settings
		least    time.Duration // how long the dead holder's slot must stay held
		most     time.Duration // how soon it must be free
	}{
		// renewed every ttl/3: at least 2/3 of the ttl left when it died
		{"redis", redisSettings, redisTTL / 2, redisTTL + time.Second},
		{"mysql", mariaSettings, 0, 2 * time.Second},
		{"postgres", postgresSettings, 0, 2 * time.Second},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			ctx := locktest.Context(t, 30*time.Second)
			s := tc.settings(t)
			sm := opener(t, holdBackends[tc.kind], s)(map[string]int{"db": 1})
			cmd := startHolder(ctx, t, tc.kind, s)
			_, err := sm.Take(ctx, req("next", "db", 1))
			mustBeFull(t, err, "db", "dead")

			locktest.KillGroup(cmd.Process.Pid)
			_ = cmd.Wait()
			died := time.Now()
			var h *Held
			locktest.WaitUntil(ctx, t, "the dead holder's slot is free", func() bool {
				h, err = sm.Take(ctx, req("next", "db", 1))
				return err == nil
			})
			defer sm.Release(h)
			d := time.Since(died)
			t.Logf("free %s after its holder died", d)
			if d > tc.most || d < tc.least {
				t.Errorf("free %s after its holder died, want within %s..%s", d, tc.least, tc.most)
			}
		})
	}
}
