package fleet

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Member is one host's row as the fleet's slot ownership reads it.
type Member struct {
	Host    string
	PID     int
	Started time.Time // its daemon's start, by its own clock
	// Silent is how long ago it last beat, by the server's clock.
	Silent  time.Duration
	Offset  time.Duration // its clock minus the server's, at its last beat
	Stopped bool
	Jobs    []uint64 // the digests of the jobs it runs (owner.Digest)
}

// Members reads the hosts' rows for slot ownership, and publishes this
// host's job digests in the same statement when they changed. The
// digests of a host are read again only when they changed (by their
// md5), so that a fleet of many hosts with many jobs reads a few bytes
// per host per beat. Not safe for concurrent use: one loop reads.
type Members struct {
	s     *Store
	known map[string]memberJobs // by host
}

type memberJobs struct {
	sum  string
	jobs []uint64
}

// NewMembers returns a reader of s's hosts for ownership.
func NewMembers(s *Store) *Members { return &Members{s: s, known: map[string]memberJobs{}} }

// encodeDigests is the column's text: the digests sorted, in hex, with
// commas between, so that equal sets are equal text.
func encodeDigests(jobs []uint64) string {
	sorted := slices.Sorted(slices.Values(jobs))
	parts := make([]string, len(sorted))
	for i, d := range sorted {
		parts[i] = strconv.FormatUint(d, 16)
	}
	return strings.Join(parts, ",")
}

func decodeDigests(text string) ([]uint64, error) {
	if text == "" {
		return nil, nil
	}
	parts := strings.Split(text, ",")
	out := make([]uint64, len(parts))
	for i, p := range parts {
		d, err := strconv.ParseUint(p, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("job digest %q: %w", p, err)
		}
		out[i] = d
	}
	return out, nil
}

// Read publishes jobs as this host's digests and returns every host's row.
func (m *Members) Read(ctx context.Context, jobs []uint64) ([]Member, error) {
	if err := m.s.EnsureSchema(ctx); err != nil {
		return nil, err
	}
	mine := encodeDigests(jobs)
	known := make([]string, 0, len(m.known))
	for host, k := range m.known {
		known = append(known, host+":"+k.sum)
	}
	// The UPDATE's change is not visible to the SELECT of the same
	// statement: this host's own digests are set from jobs below.
	rows, err := m.s.db.QueryContext(ctx, `WITH me AS (
			UPDATE cronvisor_hosts SET job_digests = $2 WHERE host = $1 AND job_digests IS DISTINCT FROM $2)
		SELECT host, pid, started_at, EXTRACT(EPOCH FROM (now() - last_beat))::float8, clock_offset_ms, stopped,
			md5(COALESCE(job_digests, '')),
			CASE WHEN host || ':' || md5(COALESCE(job_digests, '')) = ANY($3) THEN NULL ELSE COALESCE(job_digests, '') END
		FROM cronvisor_hosts`, m.s.host, mine, known)
	if err != nil {
		return nil, fmt.Errorf("history backend: read the hosts for slot ownership: %w", err)
	}
	defer rows.Close()
	var out []Member
	for rows.Next() {
		mb, err := m.scan(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("history backend: read the hosts for slot ownership: %w", err)
		}
		out = append(out, mb)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history backend: read the hosts for slot ownership: %w", err)
	}
	for i := range out {
		if out[i].Host == m.s.host {
			out[i].Jobs = jobs
			m.known[m.s.host] = memberJobs{sum: md5Hex(mine), jobs: jobs}
		}
	}
	return out, nil
}

// scan reads one row, its digests from the cache when they did not change.
func (m *Members) scan(scan func(...any) error) (Member, error) {
	var mb Member
	var silent float64
	var offsetMS int64
	var sum string
	var text *string
	if err := scan(&mb.Host, &mb.PID, &mb.Started, &silent, &offsetMS, &mb.Stopped, &sum, &text); err != nil {
		return mb, err
	}
	mb.Silent = time.Duration(silent * float64(time.Second))
	mb.Offset = time.Duration(offsetMS) * time.Millisecond
	if text == nil {
		mb.Jobs = m.known[mb.Host].jobs
		return mb, nil
	}
	jobs, err := decodeDigests(*text)
	if err != nil {
		return mb, fmt.Errorf("host %s: %w", mb.Host, err)
	}
	mb.Jobs = jobs
	m.known[mb.Host] = memberJobs{sum: sum, jobs: jobs}
	return mb, nil
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
