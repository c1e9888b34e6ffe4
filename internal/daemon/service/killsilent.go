package service

import "cronvisor/internal/ctl"

// SilentFunc reports whether adopted run runID was ended without its
// keeper, which did not answer (keeper its pid; 0: none was alive), how
// ("cgroup leaf", "process group", "" for nothing found), and whether
// nothing of it is left (recovery.Recoverer.Silent).
type SilentFunc func(runID string) (keeper int, via string, ended, ok bool)

// WithSilentKeepers supplies which adopted runs a kill ended without
// their keeper, so that the kill's answer says so.
func WithSilentKeepers(f SilentFunc) Option { return func(s *Service) { s.silent = f } }

// noteSilent fills in k, an adopted run, if its keeper did not answer the
// kill: the run was signalled by this daemon instead, and k ends with
// what it holds; false otherwise.
func (s *Service) noteSilent(k *ctl.KilledRun) bool {
	if s.silent == nil || !k.Adopted {
		return false
	}
	keeper, via, ended, ok := s.silent(k.RunID)
	if !ok || keeper == 0 {
		return false // the keeper answered, or none lives: the run is told as any other
	}
	k.KeeperSilent, k.KeeperPID, k.EndedVia, k.Ended = true, keeper, via, ended
	return true
}
