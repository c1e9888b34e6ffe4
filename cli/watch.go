package cli

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchDebounce gathers the burst of events one save makes (editors write,
// rename and chmod) into one reload.
const watchDebounce = 250 * time.Millisecond

// watchConfig sends on changed whenever path is written, created, renamed
// over or removed. It watches the directory, not the file, because editors
// and config managers replace the file by renaming a new one over it, which
// would orphan a watch on the old inode.
func watchConfig(ctx context.Context, path string, changed chan<- struct{}) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		w.Close()
		return err
	}
	if err := w.Add(filepath.Dir(abs)); err != nil {
		w.Close()
		return err
	}
	go func() {
		defer w.Close()
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Clean(ev.Name) == abs && ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename|fsnotify.Remove) != 0 {
					fire = time.After(watchDebounce)
				}
			case <-w.Errors:
			case <-fire:
				fire = nil
				select {
				case changed <- struct{}{}:
				default: // a reload is already pending
				}
			}
		}
	}()
	return nil
}
