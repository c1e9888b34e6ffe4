package daemon

import (
	"context"
	"errors"
	"io"
	"maps"
	"sync"
	"time"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/backends"
	"cronvisor/internal/lock/semaphore"
	"cronvisor/runner"
)

// Resources are the semaphores of jobs.yaml's resources:, on the lock
// backend in force (semaphore.Open), which the supervisor takes slots
// from and the service lists. A reload that changes resources: opens
// them anew: the new sizes apply to the fires from then on. A run holding
// slots of the old ones keeps them and releases them through its own
// leases; the old ones stay open until the daemon closes, since their
// connections hold those leases (Redis, SQL).
type Resources struct {
	mu    sync.Mutex
	cur   semaphore.Semaphores
	sizes map[string]int
	open  func(sizes map[string]int) (semaphore.Semaphores, error)
	all   []semaphore.Semaphores // every one opened, for Close
}

// openResources opens cfg's resources on its lock backend, with the
// job locks' settings (semaphore.Open derives the slots' namespace).
func openResources(cfg *config.Config) (*Resources, error) {
	lb := cfg.LockBackend
	kind := lb.Type
	if kind == "" {
		kind = backends.All[0].Name
	}
	b, ok := backends.Find(kind)
	if !ok {
		return nil, backendErr(cfg, errors.New("unknown backend "+lb.Type))
	}
	s := lock.Settings{URL: lb.URL, TTL: lb.TTL, Prefix: lb.Prefix,
		LocksDir: statedir.Dir(cfg.StateDir).Locks(), InRun: runner.InRun, Durability: cfg.Durability}
	r := &Resources{open: func(sizes map[string]int) (semaphore.Semaphores, error) { return semaphore.Open(b, s, sizes) }}
	if err := r.resize(cfg.Resources); err != nil {
		return nil, backendErr(cfg, err)
	}
	return r, nil
}

// resize opens the semaphores of sizes, unless they are those in force.
func (r *Resources) resize(sizes map[string]int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil && maps.Equal(r.sizes, sizes) {
		return nil
	}
	if len(sizes) == 0 {
		// Nothing opened (no resources/ directory, no connections)
		// until a file declares a resource.
		r.cur, r.sizes = noResources{}, nil
		return nil
	}
	s, err := r.open(sizes)
	if err != nil {
		return err
	}
	r.cur, r.sizes, r.all = s, maps.Clone(sizes), append(r.all, s)
	return nil
}

func (r *Resources) current() semaphore.Semaphores {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// Take implements semaphore.Semaphores with the resources in force.
func (r *Resources) Take(ctx context.Context, req semaphore.Request) (*semaphore.Held, error) {
	return r.current().Take(ctx, req)
}

// Wait implements semaphore.Semaphores with the resources in force.
func (r *Resources) Wait(ctx context.Context, req semaphore.Request, until time.Time) (*semaphore.Held, error) {
	return r.current().Wait(ctx, req, until)
}

// Release implements semaphore.Semaphores: h's leases are released
// whichever semaphores took them, and the current ones' waiters woken.
func (r *Resources) Release(h *semaphore.Held) error { return r.current().Release(h) }

// SetRun implements semaphore.Semaphores, through h's own leases.
func (r *Resources) SetRun(h *semaphore.Held, runID string, pid int) error {
	return r.current().SetRun(h, runID, pid)
}

// List implements semaphore.Semaphores: the resources in force.
func (r *Resources) List(ctx context.Context) ([]semaphore.Resource, error) {
	return r.current().List(ctx)
}

// SlotsOf is the slots ("db/1") of the resources in force whose record
// names run runID as their holder: an adopted run's (recovery's
// Config.SlotsOf). A slot that cannot be inspected is left out.
func (r *Resources) SlotsOf(ctx context.Context, runID string) []string {
	list, _ := r.List(ctx)
	var out []string
	for _, res := range list {
		for _, st := range res.Slots {
			if st.Held && st.Record.RunID == runID {
				out = append(out, st.Name)
			}
		}
	}
	return out
}

// Close closes every semaphores opened (their connections).
func (r *Resources) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, s := range r.all {
		if c, ok := s.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	r.all = nil
	return errors.Join(errs...)
}

// supervisorOptions give the supervisor the resources, and its runs'
// keepers one hand-off of their lock's and Redis slots' leases.
func (r *Resources) supervisorOptions() []runner.Option {
	return []runner.Option{runner.WithSemaphores(r), runner.WithHandoffCombiner(backends.CombineHandoffs)}
}

// resize applies a reload's resources:; when they cannot be opened the
// old ones stay, and a fire of a job using a resource they lack is
// recorded as an error that names it.
func (d *Daemon) resize(cfg *config.Config) {
	if err := d.env.Resources.resize(cfg.Resources); err != nil {
		d.log.Error("reload: resources: cannot open the new sizes; the old ones stay", "err", err)
	}
}

// Semaphores are the daemon's resources, for the service
// (service.WithSemaphores) and the commands that list them.
func (d *Daemon) Semaphores() semaphore.Semaphores { return d.env.Resources }

// noResources are the semaphores of a file that declares none.
type noResources struct{}

var errNoResources = errors.New("no resources are declared")

func (noResources) Take(context.Context, semaphore.Request) (*semaphore.Held, error) {
	return nil, errNoResources
}

func (noResources) Wait(context.Context, semaphore.Request, time.Time) (*semaphore.Held, error) {
	return nil, errNoResources
}

// Release and SetRun act on h's own leases: slots of semaphores a reload
// replaced with none.
func (noResources) Release(h *semaphore.Held) error {
	var errs []error
	for _, g := range h.Grants {
		errs = append(errs, g.Release())
	}
	return errors.Join(errs...)
}

func (noResources) SetRun(h *semaphore.Held, runID string, pid int) error {
	var errs []error
	for _, g := range h.Grants {
		errs = append(errs, g.SetRun(runID, pid))
	}
	return errors.Join(errs...)
}

func (noResources) List(context.Context) ([]semaphore.Resource, error) { return nil, nil }

// ListResources opens cfg's resources on its lock backend, lists them
// and closes them: what `locks` shows without a daemon (no waiters: only
// a daemon's fires wait).
func ListResources(ctx context.Context, cfg *config.Config) ([]semaphore.Resource, error) {
	if len(cfg.Resources) == 0 {
		return nil, nil
	}
	r, err := openResources(cfg)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.List(ctx)
}
