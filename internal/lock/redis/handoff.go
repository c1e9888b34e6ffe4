package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"cronvisor/internal/lock"
)

// redisHandoff is what a run's keeper needs to keep a Redis lease of a dead
// supervisor (Grant.Handoff): the URL, password included, so it travels
// only over the keeper's socket, never in arguments or logs.
type redisHandoff struct {
	Kind      string        `json:"kind"`
	URL       string        `json:"url"`
	Prefix    string        `json:"prefix"`
	TTL       time.Duration `json:"ttl"`
	Retention time.Duration `json:"retention"`
	Name      string        `json:"name"`
	Token     string        `json:"token"`
	Slot      string        `json:"slot"`
}

func (le *redisLease) handoff() []byte {
	l := le.locker
	b, _ := json.Marshal(redisHandoff{Kind: "redis", URL: l.url, Prefix: l.prefix, TTL: l.ttl,
		Retention: l.retention, Name: le.Name(), Token: le.token, Slot: le.slot})
	return b
}

// keepRedis takes over the lease a Grant.Handoff describes (Redis.Keep). Keep renews it
// at once: the supervisor that held it died at an unknown point of its
// renewal cycle, so the keeper trusts only the margin (at least ttl/5 left
// at any moment while not lost), spends at most a quarter of it on that
// first renewal, and declares the lease lost if it fails.
func keepRedis(handoff []byte) (lock.KeptLease, error) {
	var h redisHandoff
	if err := json.Unmarshal(handoff, &h); err != nil || h.Kind != "redis" {
		return nil, fmt.Errorf("lock: not a lease hand-off (%v)", err)
	}
	l, err := NewRedisLocker(h.URL, h.TTL, WithKeyPrefix(h.Prefix), WithRetention(h.Retention))
	if err != nil {
		return nil, err
	}
	return &keptRedis{le: l.lease(h.Name, h.Token, h.Slot)}, nil
}

type keptRedis struct{ le *redisLease }

func (k *keptRedis) Within() time.Duration { return k.le.locker.margin() }

func (k *keptRedis) Keep(ctx context.Context) <-chan struct{} {
	le, l := k.le, k.le.locker
	sent := boottime()
	opCtx, cancel := context.WithTimeout(ctx, l.margin()/4)
	ok, err := renewScript.Run(opCtx, l.client, []string{l.keys(le.Name()).lock, l.keys(le.Name()).holder},
		le.token, ms(l.ttl), ms(l.retention)).Bool()
	cancel()
	if err != nil || !ok {
		le.MarkLost()
		return le.Lost()
	}
	le.Start(ctx, func(ctx context.Context) { le.renew(ctx, sent+l.ttl) })
	return le.Lost()
}

func (k *keptRedis) Release() error {
	defer k.le.locker.Close()
	if !k.le.Started() {
		return nil // never renewed: lost at once, nothing of ours to delete
	}
	return k.le.Release()
}
