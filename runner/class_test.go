package runner

import (
	"errors"
	"fmt"
	"testing"

	"cronvisor/internal/base/run"
)

func TestClassOfNamesTheCauseOfAnEarlyEnd(t *testing.T) {
	tests := []struct {
		cause error
		want  run.Class
	}{
		{ErrReplaced, run.ClassReplaced},
		{ErrShutdown, run.ClassShutdown},
		{fmt.Errorf("ending: %w", ErrKilled), run.ClassKilled},
		{ErrLockLost, run.ClassLockLost},
		{errors.New("context canceled"), ""},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := classOf(tt.cause); got != tt.want {
			t.Errorf("classOf(%v) = %q, want %q", tt.cause, got, tt.want)
		}
	}
}
