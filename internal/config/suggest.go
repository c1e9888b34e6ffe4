package config

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// aliases maps names used by cron, systemd timers, Kubernetes and Compose to
// ours: edit distance would not find them, and they are what a newcomer
// types first.
var aliases = map[string]string{
	"cmd":                "command",
	"run":                "command",
	"exec":               "command",
	"cron":               "schedule",
	"spec":               "schedule",
	"tz":                 "timezone",
	"time_zone":          "timezone",
	"cwd":                "dir",
	"workdir":            "dir",
	"working_dir":        "dir",
	"directory":          "dir",
	"environment":        "env",
	"concurrency":        "overlap",
	"concurrency_policy": "overlap",
	"concurrencypolicy":  "overlap",
	"disabled":           "enabled",
	"suspend":            "enabled",
	"kill_timeout":       "kill_grace",
	"timeoutsec":         "timeout",
	"max_runtime":        "timeout",
	"randomized_delay":   "jitter",
	"randomizeddelaysec": "jitter",
	"persistent":         "catch_up",
}

// suggest returns ` (did you mean "x"?)` for the known key closest to an
// unknown one, or "" when nothing is close enough to be a likely typo.
func suggest(key string, known []string) string {
	lower := strings.ToLower(key)
	if a, ok := aliases[lower]; ok && slices.Contains(known, a) {
		return fmt.Sprintf(" (did you mean %q?)", a)
	}
	// A third of the key's length may differ: one typo in "env", three in
	// "shutdown_grace".
	best, bestDist := "", math.MaxInt
	for _, k := range known {
		if dist := editDistance(lower, k); dist <= max(1, len(k)/3) && dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b, counting an
// adjacent swap ("tiemout") as one edit as well.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Nearest returns the names closest to name by edit distance, at most
// limit of them and only those a likely typo away (or sharing name as a
// prefix), closest first: for "no job X; did you mean ...".
func Nearest(name string, names []string, limit int) []string {
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	lower := strings.ToLower(name)
	for _, n := range names {
		d := editDistance(lower, strings.ToLower(n))
		if d <= max(2, len(n)/3) || (lower != "" && strings.HasPrefix(strings.ToLower(n), lower)) {
			cands = append(cands, cand{n, d})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return a.dist - b.dist })
	out := make([]string, 0, min(limit, len(cands)))
	for _, c := range cands[:min(limit, len(cands))] {
		out = append(out, c.name)
	}
	return out
}
