package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"cronvisor/internal/base/mask"
	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// ErrLeaseLost means a Redis lease is no longer ours: its key expired or
// holds another token. Grant.Lost is closed by then.
var ErrLeaseLost = errors.New("lease lost")

// Defaults of the Redis backend.
const (
	// DefaultKeyPrefix starts every key the Redis backend writes.
	DefaultKeyPrefix = "cronvisor:"
	// MinRedisTTL is the shortest lease: renewal runs every ttl/3, and
	// each round trip needs a few milliseconds.
	MinRedisTTL = 100 * time.Millisecond
)

// RedisLocker is the Redis backend: `SET key token NX PX ttl`, renewed every
// ttl/3 while the run lives, released by compare-and-delete, all through
// Lua scripts so that each check and its write are atomic.
//
// Keys, for lock NAME and job JOB (prefix "cronvisor:" by default):
// PREFIXlock:NAME holds the holder's random token and expires after the
// TTL; PREFIXholder:NAME is a hash {token, rec} with the JSON record that
// `cronvisor locks` shows (the file backend's fields plus "fencing_token"),
// kept after release as the lock's last record; PREFIXslot:NAME:JOB is the
// job's slot cursor {ns, rec}; PREFIXfence:NAME counts acquisitions. The
// scripts touch several keys, so this is for a single Redis (or a primary
// with replicas), not Redis Cluster.
//
// What it promises: while one Redis instance stays up and keeps its data,
// and no holder stalls longer than the TTL, at most one holder has a lock,
// and a job runs at most once per slot across all supervisors. A lease
// that cannot be renewed is declared lost (Grant.Lost closes) a safety margin
// before it can expire, so that the supervisor can end the run first.
//
// What breaks it: a failover to a replica that had not yet received the
// SET (replication is asynchronous) lets a second holder in; so does a
// Redis restart that loses the data (no persistence: this also forgets the
// slot cursors) and an eviction policy other than the default noeviction
// (volatile-* and allkeys-* may drop a lock key early). Unlike a flock, the
// lock is not held by the run's processes: its grants are Tethered, and
// the runner has a guard end a dead supervisor's run before the lease can
// expire (see proc.Keeper). A supervisor that stalls longer than the
// TTL (SIGSTOP, GC, a suspended VM) stops renewing while its run may go
// on, and another supervisor can start the job next to it; the stalled
// one learns it on waking (Lost). For work that must never overlap, end
// the run when the lease is lost and pass the fencing token (Grant.FencingToken)
// to the database the job writes, so that it can reject a stale holder.
type RedisLocker struct {
	client    *redis.Client
	addr      string // for messages; never the password
	url       string // the URL as given, password included: only for a keeper's hand-off
	ttl       time.Duration
	retention time.Duration
	prefix    string
	host      string

	// abandons are the abandon calls that failed Acquires left running;
	// Close waits for them. Once closed, none starts.
	abandonMu sync.Mutex
	closed    bool
	abandons  sync.WaitGroup
}

var _ lock.Locker = (*RedisLocker)(nil)

// RedisOption configures a RedisLocker.
type RedisOption func(*RedisLocker)

// WithKeyPrefix replaces DefaultKeyPrefix, so that several cronvisor
// installations can share one Redis database.
func WithKeyPrefix(p string) RedisOption { return func(l *RedisLocker) { l.prefix = p } }

// WithRetention replaces DefaultRetention; it must be at least the TTL.
func WithRetention(d time.Duration) RedisOption { return func(l *RedisLocker) { l.retention = d } }

// NewRedisLocker returns a locker on the Redis at rawURL (redis://, rediss://
// for TLS, or unix://; see redis.ParseURL) whose leases last ttl unless
// renewed. It does not connect: an unreachable Redis makes each Acquire
// fail with ErrUnavailable until it is back. Timeouts and retries default
// to short values (1 s dial, read and write; 2 retries) so that a fire is
// skipped quickly; the URL's own parameters (dial_timeout, read_timeout,
// max_retries ...) take precedence.
func NewRedisLocker(rawURL string, ttl time.Duration, opts ...RedisOption) (*RedisLocker, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("lock backend: invalid redis url: %v", mask.Error(err, rawURL))
	}
	if ttl < MinRedisTTL {
		return nil, fmt.Errorf("lock backend: redis ttl %s is shorter than %s", ttl, MinRedisTTL)
	}
	l := &RedisLocker{addr: opt.Addr, url: rawURL, ttl: ttl, retention: lock.DefaultRetention, prefix: DefaultKeyPrefix}
	for _, o := range opts {
		o(l)
	}
	if l.retention < ttl {
		return nil, fmt.Errorf("lock backend: redis retention %s is shorter than the ttl %s", l.retention, ttl)
	}
	l.host = lock.LocalHost()
	setClientDefaults(opt)
	l.client = redis.NewClient(opt)
	return l, nil
}

// setClientDefaults sets what the URL left unset.
func setClientDefaults(opt *redis.Options) {
	for _, d := range []*time.Duration{&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, &opt.PoolTimeout} {
		if *d == 0 {
			*d = time.Second
		}
	}
	if opt.MaxRetries == 0 {
		opt.MaxRetries = 2
	}
	if opt.MinRetryBackoff == 0 {
		opt.MinRetryBackoff = 20 * time.Millisecond
	}
	if opt.MaxRetryBackoff == 0 {
		opt.MaxRetryBackoff = 200 * time.Millisecond
	}
	if opt.PoolSize == 0 {
		opt.PoolSize = 4 // a few lock operations at a time
	}
	opt.DialerRetries = 2
	opt.ContextTimeoutEnabled = true // our per-operation deadlines must hold
	opt.DisableIdentity = true       // no CLIENT SETINFO round trip
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

// Close closes the connections, once the abandon calls of failed Acquires
// have ended (each is bounded by lock.OpTimeout). Leases still held stop
// renewing and are declared lost; release them first.
func (l *RedisLocker) Close() error {
	l.abandonMu.Lock()
	l.closed = true
	l.abandonMu.Unlock()
	l.abandons.Wait()
	return l.client.Close()
}

// TTL returns the lease duration.
func (l *RedisLocker) TTL() time.Duration { return l.ttl }

// redisKeys are one lock's keys.
type redisKeys struct{ lock, holder, fence string }

func (l *RedisLocker) keys(name string) redisKeys {
	return redisKeys{lock: l.prefix + "lock:" + name, holder: l.prefix + "holder:" + name, fence: l.prefix + "fence:" + name}
}

// slotKey is a job's slot cursor under a lock; names have no ':' (nameRE).
func (l *RedisLocker) slotKey(name, job string) string {
	return l.prefix + "slot:" + name + ":" + job
}

// redisRecord is the JSON stored in the holder hash and slot cursors.
type redisRecord struct {
	lock.Record
	FencingToken int64 `json:"fencing_token"`
}

// parseRecord decodes a stored record; "" (none) and garbage give ok false.
func parseRedisRecord(s string) (redisRecord, bool) {
	var r redisRecord
	if s == "" || json.Unmarshal([]byte(s), &r) != nil {
		return redisRecord{}, false
	}
	return r, true
}

// foreignOr returns the record's holder, or a Foreign one for a lock key
// that cronvisor did not write.
func foreignOr(rec string) lock.Record {
	if r, ok := parseRedisRecord(rec); ok {
		return r.Record
	}
	return lock.Record{Holder: run.Holder{Foreign: true}}
}

// slotArg encodes a slot for the scripts (see redis_script.go).
func slotArg(slot time.Time) (string, error) {
	ns := slot.UnixNano()
	if ns <= 0 {
		return "", fmt.Errorf("slot %s is not after 1970", slot.Format(time.RFC3339))
	}
	return fmt.Sprintf("%019d", ns), nil
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// unavailable reports errors that mean Redis cannot serve us right now:
// anything but an error reply, and the replies of a server that is
// loading, read-only (a replica) or busy.
func unavailable(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return true
	}
	for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "BUSY", "TRYAGAIN", "CLUSTERDOWN"} {
		if strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return false
}

// wrap turns a Redis error into one that says what failed and, when Redis
// is out of reach, matches ErrUnavailable. The caller's own cancellation is
// passed through as it is.
func (l *RedisLocker) wrap(caller context.Context, what string, err error) error {
	if cerr := caller.Err(); cerr != nil {
		return cerr
	}
	if unavailable(err) {
		return fmt.Errorf("%s: %w: redis at %s: %v", what, lock.ErrUnavailable, l.addr, err)
	}
	return fmt.Errorf("%s: redis at %s: %w", what, l.addr, err)
}

// ClockSkew returns how far Redis's clock (TIME) is ahead of ours,
// negative when behind, taking our reading at the middle of the round
// trip. Leases do not depend on it (expiries are measured by each side's
// own clock), but slots and holder times compared across hosts do.
func (l *RedisLocker) ClockSkew(ctx context.Context) (time.Duration, error) {
	opCtx, cancel := context.WithTimeout(ctx, lock.OpTimeout)
	defer cancel()
	start := time.Now()
	remote, err := l.client.Time(opCtx).Result()
	if err != nil {
		return 0, l.wrap(ctx, "clock skew", err)
	}
	rtt := time.Since(start)
	return remote.Sub(start.Add(rtt / 2)), nil
}
