package daemon

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
// over or removed, until ctx is done; done is closed when its goroutine has
// returned. It watches the directory, not the file, because editors and
// config managers replace the file by renaming a new one over it, which
// would orphan a watch on the old inode.
func watchConfig(ctx context.Context, path string, changed chan<- struct{}) (done <-chan struct{}, err error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		w.Close()
		return nil, err
	}
	if err := w.Add(filepath.Dir(abs)); err != nil {
		w.Close()
		return nil, err
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
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
	return stopped, nil
}
