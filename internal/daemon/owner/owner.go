package owner

import (
	"hash/fnv"
	"strconv"
	"time"

	"cronvisor/internal/config"
)

// Margin is how long after its fire instant a host must have beaten for
// its peers to take it that it fired the slot: room for the hosts'
// clocks' measured offsets and for a scheduler that dispatches a few
// milliseconds late. An owner that died within it may have fired: the
// next host fires too, and the lock and the ledger refuse one of them.
const Margin = 500 * time.Millisecond

// Member is one host as a View saw it.
type Member struct {
	Host string
	// Incarnation tells one start of the host's daemon from the next
	// (its pid and start): a daemon that restarted was down in between.
	Incarnation string
	Up          bool          // it beat recently and did not stop
	LastBeat    time.Time     // its last beat, by this host's clock
	Offset      time.Duration // its clock minus this host's
	Jobs        map[uint64]bool
}

// View is the fleet's hosts as read at Read (by this host's clock).
type View struct {
	Read    time.Time
	Members []Member
}

func (v *View) find(host string) *Member {
	for i := range v.Members {
		if v.Members[i].Host == host {
			return &v.Members[i]
		}
	}
	return nil
}

// Digest identifies a job as far as its slots go: hosts whose digests of
// a job are equal fire the same slots under the same lock, so either may
// own it. A host whose job differs (another schedule, zone, lock, or
// disabled) is never handed it.
func Digest(j *config.Job) uint64 {
	h := fnv.New64a()
	for _, s := range []string{j.Name, j.Schedule, j.Timezone, j.Lock,
		strconv.FormatBool(j.Overlap == config.OverlapAllow), strconv.FormatBool(j.Enabled)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// Digests are the digests of jobs' scheduled ones, as this host
// publishes them.
func Digests(jobs []config.Job) map[uint64]bool {
	out := make(map[uint64]bool, len(jobs))
	for i := range jobs {
		if jobs[i].Sched != nil {
			out[Digest(&jobs[i])] = true
		}
	}
	return out
}

// weight is host's rendezvous weight for the job named job.
func weight(host, job string) uint64 {
	return mix(hashString(host) ^ mix(hashString(job)))
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// mix is splitmix64's finaliser: FNV alone spreads similar names (host-1,
// host-2) poorly over the high bits.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// top is the owner of the job named job with digest d in v: the up host
// running it with the highest weight, leaving out the host except; false
// when there is none.
func top(v *View, job string, d uint64, except string) (Member, bool) {
	var best Member
	var bestW uint64
	found := false
	for _, m := range v.Members {
		if !m.Up || !m.Jobs[d] || m.Host == except {
			continue
		}
		w := weight(m.Host, job)
		if !found || w > bestW || (w == bestW && m.Host < best.Host) {
			best, bestW, found = m, w, true
		}
	}
	return best, found
}
