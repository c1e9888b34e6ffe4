package mask

import (
	"regexp"
	"strings"
)

// uuidRE is a UUID: healthchecks.io's ping URLs and Teams' webhook paths
// carry them, and whoever knows one can ping or post.
var uuidRE = regexp.MustCompile(`(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// tokenRE is a path segment that looks like a generated token: long,
// of a token's alphabet, letters and digits both.
var tokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]{24,}$`)

// secretAfter names, per host suffix, the path segment after which every
// segment is a secret: Slack's /services/T…/B…/token, Teams' /webhookb2/…
// and /webhook/…, Discord's /api/webhooks/id/token.
var secretAfter = []struct{ host, segment string }{
	{"hooks.slack.com", "services"},
	{"hooks.slack.com", "workflows"},
	{"hooks.slack.com", "triggers"},
	{"webhook.office.com", "webhookb2"},
	{"outlook.office.com", "webhook"},
	{"discord.com", "webhooks"},
	{"discordapp.com", "webhooks"},
}

// maskPath masks the secret-bearing segments of an escaped path: a UUID
// or token-like segment anywhere, a healthchecks.io ping key, and every
// segment after a webhook service's marker.
func maskPath(path, host string) string {
	segs := strings.Split(path, "/")
	after := len(segs) // mask every segment from here on
	for _, sa := range secretAfter {
		if host != sa.host && !strings.HasSuffix(host, "."+sa.host) {
			continue
		}
		for i, s := range segs {
			if s == sa.segment && i+1 < after {
				after = i + 1
			}
		}
	}
	hc := host == "hc-ping.com" || strings.HasSuffix(host, ".hc-ping.com")
	for i, s := range segs {
		switch {
		case s == "":
		case i >= after, uuidRE.MatchString(s), tokenRE.MatchString(s) && strings.ContainsAny(s, "0123456789"):
			segs[i] = Marker
		case hc && i == 1: // hc-ping.com/PING_KEY/slug: the key
			segs[i] = Marker
		}
	}
	return strings.Join(segs, "/")
}
