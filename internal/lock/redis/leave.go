package redis

// Leave stops renewing a lease kept for a dead supervisor without
// releasing it: it lapses after its ttl, unless the next supervisor on
// the state dir takes it over again first (from its run's guard file).
// A supervisor that stops while it guards such a run leaves it so: a
// Release would free the lock under a run that goes on.
func (k *keptRedis) Leave() {
	k.le.stopRenewal()
	k.le.locker.Close()
}
