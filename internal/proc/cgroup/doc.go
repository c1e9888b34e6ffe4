// Package cgroup is cronvisor's use of the cgroup v2 hierarchy: a leaf
// cgroup per run under cronvisor's own subtree, a child started straight
// into it, the whole leaf killed at once (cgroup.kill), its emptiness
// awaited, what it cost (cpu.stat, memory.peak, memory.events) and the
// limits written to it. It imports nothing of cronvisor's.
package cgroup
