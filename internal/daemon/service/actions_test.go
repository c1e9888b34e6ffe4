package service

import (
	"context"
	"testing"

	"cronvisor/internal/ctl"
)

// TestOneRuleForPauseAndDisabled: run-now and trigger, the CLI's and the
// console's fires alike, refuse a paused or disabled job unless forced,
// saying what holds it; a forced fire runs, says what it went past, and
// leaves the job as it was.
func TestOneRuleForPauseAndDisabled(t *testing.T) {
	s, _ := newTestService(t, job(t, "p", true), job(t, "off", false), job(t, "both", false), job(t, "free", true))
	ctx := context.Background()
	for _, name := range []string{"p", "both"} {
		if err := s.Pause(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	type fireFunc func(context.Context, string, ctl.FireOptions) (ctl.RunResult, error)
	for verb, fire := range map[string]fireFunc{"run-now": s.RunNow, "trigger": s.Trigger} {
		for _, tt := range []struct {
			job                string
			paused, disabled   bool
			wantHeld, wantUser bool
		}{
			{job: "p", paused: true, wantHeld: true, wantUser: true},
			{job: "off", disabled: true, wantHeld: true},
			{job: "both", paused: true, disabled: true, wantHeld: true, wantUser: true},
			{job: "free"},
		} {
			t.Run(verb+" "+tt.job, func(t *testing.T) {
				res, err := fire(ctx, tt.job, ctl.FireOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if !tt.wantHeld {
					if !res.Started || res.Refused || res.Hold != nil || res.Forced {
						t.Errorf("a fire of a free job answered %+v, want started, nothing held", res)
					}
					s.Wait()
					return
				}
				h := res.Hold
				if !res.Refused || res.Started || h == nil || h.Paused != tt.paused || h.Disabled != tt.disabled || res.Reason != h.String() {
					t.Fatalf("unforced: %+v (hold %+v), want refused, paused %v, disabled %v", res, h, tt.paused, tt.disabled)
				}
				if tt.wantUser && (h.PausedBy == nil || h.PausedBy.User == "" || h.PausedBy.At.IsZero()) {
					t.Errorf("unforced: hold %+v, want who paused it", h)
				}
				res, err = fire(ctx, tt.job, ctl.FireOptions{Force: true})
				if err != nil || !res.Started || !res.Forced || res.Hold == nil || res.Hold.Paused != tt.paused {
					t.Errorf("forced: %+v, %v; want started, forced past the hold", res, err)
				}
				s.Wait()
				if st := stateOf(t, s, tt.job); st.Paused != tt.paused || st.Enabled == tt.disabled {
					t.Errorf("after a forced fire: paused %v enabled %v, want the job as it was", st.Paused, st.Enabled)
				}
			})
		}
	}
}
