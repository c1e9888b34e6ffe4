package history

import (
	"context"
	"log/slog"
	"testing"

	"cronvisor/internal/base/run"
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

// finished writes e's end as a supervisor does (through ending.Path, in
// the product) and returns whether it is durable.
func (w *Writer) finished(e run.End) error {
	_, err := w.WriteEnd(context.Background(), e)
	return err
}
