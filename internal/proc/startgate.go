package proc

import "sync"

// startGate bounds the runs between the making of their descriptors
// (output pipes, cgroup leaf, the keeper's tether) and the close of the
// child's ends after its fork. The forks are one at a time (os/exec's
// ForkLock) and each copies the whole descriptor table, which the child
// then closes at its exec: fires due at once that all made their
// descriptors and queued at the fork made every fork copy all of them.
// At 1,000 fires a second the daemon held 5,000 to 10,000 descriptors,
// and copying them was the largest single part of its fork. A fire
// queued here holds only its lock.
var startGate = make(chan struct{}, startsAtOnce)

// startsAtOnce is enough for one run's descriptors to be made while
// another forks, on each processor.
const startsAtOnce = 4

// holdStart waits for a place at the gate; its release may be called
// more than once.
func holdStart() (release func()) {
	startGate <- struct{}{}
	var once sync.Once
	return func() { once.Do(func() { <-startGate }) }
}
