package procfs

import (
	"strings"
	"testing"
)

// A process read right after Start may still be inside execve, with its
// arguments and environment not yet laid out; the readers wait for them.
func TestReadersRightAfterStart(t *testing.T) {
	t.Parallel()
	for range 200 {
		cmd := startSleep(t, "CRONVISOR_RUN_ID=r-42", nil)
		pid := cmd.Process.Pid
		if !HasEnv(pid, []byte("CRONVISOR_RUN_ID=r-42")) {
			t.Fatalf("HasEnv right after Start = false, want true")
		}
		if argv, err := Argv(pid); err != nil || strings.Join(argv, " ") != "sleep 30" {
			t.Fatalf("Argv right after Start = %q, %v; want sleep 30", argv, err)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

func TestParseStatExecing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, line string
		want       bool
	}{
		{"inside execve", "29575 (sleep) R 29570 29524 27054 0 -1 4194304 2 0 0 0 0 0 0 0 20 0 1 0 1911323 397312 0 18446744073709551615 0 0 140721835977356 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 140721835977356 0 0 0 0", true},
		{"running", "31993 (cat) R 31990 31990 27054 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 1913646 3133440 410 18446744073709551615 94585286033408 94585286053289 140728017254384 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 94585286069296 94585286070912 94586195193856 140728017259194 140728017259214 140728017259214 140728017260523 0", false},
		{"kernel thread", "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 22 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0", false},
		{"zombie", "40 (sh) Z 1 40 40 0 -1 4227084 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0", false},
	} {
		st, err := parseStat(1, []byte(tc.line+"\n"))
		if err != nil || st.Execing != tc.want {
			t.Errorf("%s: Execing = %v, %v; want %v", tc.name, st.Execing, err, tc.want)
		}
	}
}
