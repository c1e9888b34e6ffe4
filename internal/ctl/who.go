package ctl

import "context"

// Peer is the process at the other end of a control socket connection,
// as the kernel recorded it at connect time (SO_PEERCRED).
type Peer struct {
	UID int
	PID int
}

// PeerOf returns the peer of the connection a request came on; false for a
// context that did not come from Serve (the embedded console's calls).
func PeerOf(ctx context.Context) (Peer, bool) {
	p, ok := ctx.Value(peerKey{}).(peerInfo)
	if !ok || p.cred == nil {
		return Peer{}, false
	}
	return Peer{UID: int(p.cred.Uid), PID: int(p.cred.Pid)}, true
}
