package history

import (
	"context"
	"log/slog"
	"testing"
)

// failOnError is a logger that fails the test at every Error record.
func failOnError(t testing.TB) *slog.Logger {
	return slog.New(tbHandler{t})
}

type tbHandler struct{ t testing.TB }

func (h tbHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h tbHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.t.Errorf("logged: %s", r.Message)
	}
	return nil
}
func (h tbHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h tbHandler) WithGroup(string) slog.Handler      { return h }
