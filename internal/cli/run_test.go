package cli

import (
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestOnSignal checks that the signal goroutine of `cronvisor run` kills
// the run on a signal, hands the signal over without a race (run with
// -race), and is gone once stop returns, signal or not.
func TestOnSignal(t *testing.T) {
	tests := []struct {
		name string
		sig  os.Signal // nil: none comes
	}{
		{"no signal", nil},
		{"SIGTERM", syscall.SIGTERM},
		{"SIGINT", syscall.SIGINT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			sigs := make(chan os.Signal, 1)
			var killed atomic.Int32
			killedBy := make(chan os.Signal, 1)
			stop := onSignal(sigs, func(s os.Signal) { killed.Add(1); killedBy <- s })
			if tt.sig != nil {
				sigs <- tt.sig
				if got := <-killedBy; got != tt.sig {
					t.Fatalf("killed by %v, want %v", got, tt.sig)
				}
			}
			if got := stop(); got != tt.sig {
				t.Errorf("stop() = %v, want %v", got, tt.sig)
			}
			wantKills := int32(0)
			if tt.sig != nil {
				wantKills = 1
			}
			if n := killed.Load(); n != wantKills {
				t.Errorf("kill called %d times, want %d", n, wantKills)
			}
			// stop has waited for the goroutine; other tests' goroutines
			// may still be winding down, so allow them a moment.
			deadline := time.Now().Add(time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				runtime.Gosched()
			}
			if n := runtime.NumGoroutine(); n > before {
				t.Errorf("%d goroutines after stop, %d before: the signal goroutine leaked", n, before)
			}
		})
	}
}
