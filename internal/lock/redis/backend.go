package redis

import (
	"errors"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"cronvisor/internal/base/mask"
	"cronvisor/internal/lock"
)

// Redis is the Redis backend: leases with a ttl, renewed, which a keeper
// can take over.
var Redis = lock.Backend{
	Name:    "redis",
	Address: "url",
	Check:   checkRedisURL,
	TTL:     checkRedisTTL,
	Prefix:  func(string) error { return nil },
	Open: func(s lock.Settings) (lock.Locker, error) {
		var opts []RedisOption
		if s.Prefix != "" {
			opts = append(opts, WithKeyPrefix(s.Prefix))
		}
		return NewRedisLocker(s.URL, s.TTL, opts...)
	},
	Keep: keepRedis,
}

func checkRedisURL(s string) (string, error) {
	want := "a redis://HOST:PORT/DB or rediss:// URL"
	p, err := url.Parse(s)
	if err != nil || (p.Scheme != "redis" && p.Scheme != "rediss") || p.Host == "" {
		return want, errShape
	}
	_, err = redis.ParseURL(s) // as NewRedisLocker does
	return want, mask.Reason(err, s)
}

// errShape is an address not of the form asked: the "is not …" of its
// message says it all.
var errShape = errors.New("")

// maxRedisTTL is the longest lease NewRedisLocker takes: how long Redis
// keeps the locks' records (DefaultRetention), which a lease may not
// outlive.
const maxRedisTTL = 7 * 24 * time.Hour

func checkRedisTTL(d time.Duration) error {
	if d < time.Second {
		return errors.New("shorter than 1s; the lease could lapse between renewals")
	}
	if d > maxRedisTTL {
		return errors.New("longer than 7d, how long Redis keeps the locks' records; the lease would outlive them")
	}
	return nil
}
