package history

import (
	"context"
	"log/slog"
	"strings"
	"sync"
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

// logLines collects a logger's records as text.
type logLines struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logLines) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }
