package statedir

import "testing"

// TestLayout lists every path of a state dir: several are the outside
// contract (locks/, logs/, the history, the socket), so a change here is
// a change of the contract.
func TestLayout(t *testing.T) {
	d := Dir("/var/lib/cv")
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"state dir", d.String(), "/var/lib/cv"},
		{"history", d.History(), "/var/lib/cv/history.db"},
		{"socket", d.Socket(), "/var/lib/cv/cronvisor.sock"},
		{"socket lock", d.SocketLock(), "/var/lib/cv/cronvisor.sock.lock"},
		{"console log", d.ConsoleLog(), "/var/lib/cv/cronvisor.log"},
		{"pauses", d.Pauses(), "/var/lib/cv/paused.json"},
		{"pauses lock", d.PausesLock(), "/var/lib/cv/paused.json.lock"},
		{"locks", d.Locks(), "/var/lib/cv/locks"},
		{"lock file", d.LockFile("orders"), "/var/lib/cv/locks/orders.lock"},
		{"logs", d.Logs(), "/var/lib/cv/logs"},
		{"job logs", d.JobLogs("sync"), "/var/lib/cv/logs/sync"},
		{"run log", d.RunLog("sync", "r1"), "/var/lib/cv/logs/sync/r1.log"},
		{"spool", d.Spool(), "/var/lib/cv/spool"},
		{"keepers", d.Keepers(), "/var/lib/cv/runs"},
		{"run end", d.RunEnd("r1"), "/var/lib/cv/runs/r1.end"},
		{"guard slot", d.Guard("7-99-0"), "/var/lib/cv/runs/7-99-0.guard"},
		{"guard slot beside an end", GuardBeside(d.RunEnd("r1"), "7-99-0"), "/var/lib/cv/runs/7-99-0.guard"},
		{"relative state dir", Dir(".cronvisor").Socket(), ".cronvisor/cronvisor.sock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %s, want %s", tt.got, tt.want)
			}
		})
	}
}

// TestRunIDOfFileName reads a run id back from the names RunLog and RunEnd
// give, and refuses other names found in those dirs.
func TestRunIDOfFileName(t *testing.T) {
	tests := []struct {
		name   string
		parse  func(string) (string, bool)
		file   string
		wantID string
		wantOK bool
	}{
		{"run log", RunLogID, "r1.log", "r1", true},
		{"not a run log", RunLogID, "r1.log.tmp", "", false},
		{"run end", RunEndID, "r1.end", "r1", true},
		{"keeper's temporary file", RunEndID, "r1.end.tmp42", "", false},
		{"guard slot", GuardSlot, "7-99-0.guard", "7-99-0", true},
		{"a run end is no guard", GuardSlot, "r1.end", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := tt.parse(tt.file)
			if ok != tt.wantOK || (ok && id != tt.wantID) {
				t.Errorf("%s: got %q, %v; want %q, %v", tt.file, id, ok, tt.wantID, tt.wantOK)
			}
		})
	}
}
