package crontab

import "regexp"

// pingTail matches a healthchecks ping at the end of a command, as its
// docs write one: `CMD && curl -fsS -m 10 --retry 5 -o /dev/null URL`
// (or wget), with the URL of hc-ping.com or of a self-hosted /ping/ path.
// Its groups: the command before it (empty for a line that only pings)
// and the URL. A /start, /fail or exit-code ping is left alone: it says
// more than `ping:` would.
var pingTail = regexp.MustCompile(`^(?:(.*\S)\s*&&\s*)?(?:curl|wget)((?:\s+-[^\s]+(?:\s+(?:[0-9]+|/dev/null|-))?)*)\s+(['"]?)(https?://(?:hc-ping\.com|[^/\s'"]+/ping)/[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)?)(['"]?)(?:\s*>\s*/dev/null(?:\s+2>&1)?)?\s*$`)

// pingSuffixes are the healthchecks paths that are not a plain success.
var pingSuffixes = regexp.MustCompile(`/(start|fail|log|[0-9]+)$`)

// splitPing takes a healthchecks ping off the end of cmd: rest is what
// runs before it ("" when the line only pings) and url what to give
// ping:. ok is false when cmd ends in no such ping.
func splitPing(cmd string) (rest, url string, ok bool) {
	m := pingTail.FindStringSubmatch(cmd)
	if m == nil || m[3] != m[5] || pingSuffixes.MatchString(m[4]) {
		return cmd, "", false
	}
	return m[1], m[4], true
}
