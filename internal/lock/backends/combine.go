package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"cronvisor/internal/lock"
)

// combinedKind is the kind of a hand-off of several leases: no backend
// is named so, and KeepLease takes it apart.
const combinedKind = "combined"

// combined is the hand-off of several leases, each its own backend's.
type combined struct {
	Kind  string            `json:"kind"`
	Parts []json.RawMessage `json:"parts"`
}

// CombineHandoffs makes one hand-off of hs (a run's lock and its
// resource slots), so that its keeper keeps every lease in it: KeepLease
// keeps them all, loses them when any is lost, leaves the least Within
// of them and releases them all. Nil ones are left out; a single one is
// returned as it is, none as nil.
func CombineHandoffs(hs ...[]byte) []byte {
	var parts []json.RawMessage
	for _, h := range hs {
		var c combined
		switch {
		case len(h) == 0:
		case lock.HandoffKind(h) == combinedKind && json.Unmarshal(h, &c) == nil:
			parts = append(parts, c.Parts...)
		default:
			parts = append(parts, h)
		}
	}
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	b, _ := json.Marshal(combined{Kind: combinedKind, Parts: parts})
	return b
}

// keepCombined takes over each lease of a combined hand-off, or none.
func keepCombined(handoff []byte) (lock.KeptLease, error) {
	var c combined
	if err := json.Unmarshal(handoff, &c); err != nil || len(c.Parts) == 0 {
		return nil, fmt.Errorf("lock: not a lease hand-off (%d parts, %v)", len(c.Parts), err)
	}
	k := &keptAll{stop: make(chan struct{})}
	for _, p := range c.Parts {
		kl, err := KeepLease(p)
		if err != nil {
			_ = k.Release()
			return nil, err
		}
		k.parts = append(k.parts, kl)
	}
	return k, nil
}

// keptAll is the leases of a combined hand-off, kept together.
type keptAll struct {
	parts    []lock.KeptLease
	stop     chan struct{} // closed by Release: the watchers end
	stopOnce sync.Once
	watchers sync.WaitGroup
}

// Keep keeps every lease; the channel is closed when any is lost, for
// the run holds them all.
func (k *keptAll) Keep(ctx context.Context) <-chan struct{} {
	lost := make(chan struct{})
	var once sync.Once
	for _, p := range k.parts {
		ch := p.Keep(ctx)
		k.watchers.Go(func() {
			select {
			case <-ch:
				once.Do(func() { close(lost) })
			case <-ctx.Done():
			case <-k.stop:
			}
		})
	}
	return lost
}

// Within is the least of the leases': a lost one leaves no longer.
func (k *keptAll) Within() time.Duration {
	var least time.Duration
	for i, p := range k.parts {
		if w := p.Within(); i == 0 || w < least {
			least = w
		}
	}
	return least
}

// Release gives up every lease.
func (k *keptAll) Release() error {
	k.stopOnce.Do(func() { close(k.stop) })
	k.watchers.Wait()
	var errs []error
	for _, p := range k.parts {
		errs = append(errs, p.Release())
	}
	return errors.Join(errs...)
}

// Leave stops renewing every lease without releasing any (a guard of a
// dead supervisor's run that stops: see recovery), so that a combined
// lease is guarded as a single one is. A part that cannot be left is
// released instead: nothing else would free it.
func (k *keptAll) Leave() {
	k.stopOnce.Do(func() { close(k.stop) })
	k.watchers.Wait()
	for _, p := range k.parts {
		if l, ok := p.(interface{ Leave() }); ok {
			l.Leave()
		} else {
			_ = p.Release()
		}
	}
}
