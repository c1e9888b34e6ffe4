package runner

import "time"

// NextFire is job's entry of NextFires, without copying every job's:
// the status of one job among a million asks for its own alone.
func (s *Scheduler) NextFire(job string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.next[job]
	return t, ok
}
