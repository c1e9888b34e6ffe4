package proc

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestEndKeepsUsage: the keeper's End file carries the run's usage, and
// an End without one (an older keeper's) reads as not measured.
func TestEndKeepsUsage(t *testing.T) {
	dir := t.TempDir()
	ended := time.Unix(1_700_000_000, 5).UTC()
	for _, tc := range []struct {
		name string
		file string // written as is; "" writes the End with WriteEnd
		want run.Usage
	}{
		{"measured", "", run.Usage{Measured: true, CPUUser: 520123 * time.Microsecond, CPUSystem: 3 * time.Millisecond,
			MemoryPeak: 120 << 20, OOMKilled: true}},
		{"not measured", "", run.Usage{}},
		{"an older keeper's", `{"run_id":"r1","outcome":"exited","exit_code":0,"ended_at":"2023-11-14T22:13:20.000000005Z","keeper_pid":9,"run":{}}`,
			run.Usage{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".end")
			if tc.file == "" {
				if err := WriteEnd(path, End{RunID: "r1", Outcome: Exited, Ended: ended, Usage: tc.want}, true); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			e, err := ReadEnd(path)
			if err != nil {
				t.Fatal(err)
			}
			if e.Usage != tc.want || !e.Ended.Equal(ended) {
				t.Errorf("read back usage %+v, ended %v; want %+v, %v", e.Usage, e.Ended, tc.want, ended)
			}
		})
	}
}
