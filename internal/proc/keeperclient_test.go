package proc

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// TestAskKeptOfASilentKeeper: a keeper whose socket takes the question
// and never answers (frozen) is ErrKeeperSilent after askTimeout; one
// that does not keep the run is ErrNotKept.
func TestAskKeptOfASilentKeeper(t *testing.T) {
	tests := []struct {
		name   string
		answer string // "": none
		want   error
	}{
		{"silent", "", ErrKeeperSilent},
		{"not kept", "unknown\n", ErrNotKept},
		{"ended", "ok\n", nil},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pid := 1<<22 + 100 + i // no process's: the address is the test's
			l, err := net.Listen("unix", keeperAddress(pid))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			hold := make(chan struct{}) // the silent keeper's connection, held until the answer
			var wg sync.WaitGroup
			defer wg.Wait()
			defer close(hold)
			wg.Go(func() {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				if tc.answer == "" {
					<-hold
					return
				}
				_, _ = c.Read(make([]byte, 64))
				_, _ = c.Write([]byte(tc.answer))
			})
			start := time.Now()
			err = AskKept(pid, "r1", false)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("AskKept: %v, want %v", err, tc.want)
			}
			if took := time.Since(start); took > askTimeout+time.Second {
				t.Errorf("AskKept took %v, over its bound %v", took, askTimeout)
			}
		})
	}
}
