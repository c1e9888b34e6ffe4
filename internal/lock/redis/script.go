package redis

import "github.com/redis/go-redis/v9"

// The Lua scripts below are the Redis backend's only writes: each runs
// atomically on the server, so a check and the write it guards cannot be
// split by another supervisor's command. Every script is idempotent for its
// own token, because go-redis retries a command whose reply was lost and
// the script may already have run.
//
// Keys (see redisKeys): the lock (its value is the holder's token), the
// holder hash {token, rec}, the fencing counter and the job's slot cursor
// hash {ns, rec}; each script lists the ones it takes. Slots travel as
// zero-padded 19-digit Unix nanoseconds, so that string order is time
// order: Lua's numbers are doubles and would round them.
//
// These *redis.Script values are package-level but immutable: a script is
// its source and SHA1, and go-redis keeps no per-script state.

// acquireScript takes the lock if it is free and the slot not yet run.
// KEYS: lock, holder, fence, slot. ARGV: token, ttl ms, record JSON
// (without fencing_token), slot (empty for manual runs), retention ms.
// Returns {status, record}: "ok" with the stored record (also when our own
// retried call already took it), "held" with the holder's record (empty
// when the lock key was set outside cronvisor), "done" with the record of
// the run that claimed the cursor. A missing fencing counter starts at
// Redis's clock in milliseconds rather than at 0: if Redis lost its data
// (a restart without persistence), new tokens still exceed the old ones,
// unless the lock was taken more than once a millisecond on average.
var acquireScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local rec = ''
  if redis.call('HGET', KEYS[2], 'token') == cur then
    rec = redis.call('HGET', KEYS[2], 'rec') or ''
  end
  if cur == ARGV[1] then return {'ok', rec} end
  return {'held', rec}
end
if ARGV[4] ~= '' then
  local last = redis.call('HGET', KEYS[4], 'ns')
  if last and last >= ARGV[4] then
    return {'done', redis.call('HGET', KEYS[4], 'rec') or ''}
  end
end
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.replicate_commands() -- TIME before writes: needed before Redis 5
  local t = redis.call('TIME')
  redis.call('SET', KEYS[3], string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)))
end
local fence = redis.call('INCR', KEYS[3])
local rec = string.sub(ARGV[3], 1, -2) .. ',"fencing_token":' .. string.format('%d', fence) .. '}'
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[2], 'token', ARGV[1], 'rec', rec)
redis.call('PEXPIRE', KEYS[2], ARGV[5])
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[4], 'ns', ARGV[4], 'rec', rec)
  redis.call('PEXPIRE', KEYS[4], ARGV[5])
end
return {'ok', rec}
`)

// renewScript extends the lock only while it holds our token: a lease that
// expired and was taken over is never extended. KEYS: lock, holder. ARGV:
// token, ttl ms, retention ms. Returns 1 if renewed, 0 if not ours.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
`)

// releaseScript deletes the lock only while it holds our token, so a run
// whose lease expired cannot delete its successor's lock. The holder hash
// stays as the lock's last record, as the file backend's record does.
// KEYS: lock. ARGV: token. Returns 1 if deleted, 0 if not ours.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`)

// setPIDScript rewrites the holder record, and the slot cursor's record if
// the cursor is still our slot, while the lock holds our token. KEYS: lock,
// holder, slot. ARGV: token, record JSON, slot (empty for manual runs),
// retention ms. Returns 1 if written, 0 if not ours.
var setPIDScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], 'token', ARGV[1], 'rec', ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
if ARGV[3] ~= '' and redis.call('HGET', KEYS[3], 'ns') == ARGV[3] then
  redis.call('HSET', KEYS[3], 'rec', ARGV[2])
end
return 1
`)

// inspectScript reads a lock and its record in one step. KEYS: lock,
// holder. Returns {"held" or "free", record}; a held lock whose token is
// not the record's was set outside cronvisor and gets an empty record.
var inspectScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
local rec = redis.call('HGET', KEYS[2], 'rec') or ''
if not cur then return {'free', rec} end
if redis.call('HGET', KEYS[2], 'token') ~= cur then rec = '' end
return {'held', rec}
`)
