package notify

import "time"

// LastNotification is the newest notification result of job; false when
// none was sent since this process started.
func (n *Notifier) LastNotification(job string) (Last, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := n.jobsSt[job]
	if st == nil || st.notified.Result == "" {
		return Last{}, false
	}
	return st.notified, true
}

// FailedPing is the newest ping of job that was not delivered.
func (n *Notifier) FailedPing(job string) (Last, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := n.jobsSt[job]
	if st == nil || st.pinged.Result == "" {
		return Last{}, false
	}
	return st.pinged, true
}

// String renders a result for status: "failure: ok at T", with the
// error when it failed.
func (l Last) String() string {
	s := l.Event + ": " + l.Result + " at " + l.At.Format(time.RFC3339)
	if l.Result != ResultOK && l.Err != "" {
		s += ": " + l.Err
	}
	return s
}

// Describe is what status shows of job: its newest notification and
// its newest ping that failed ("" for none).
func (n *Notifier) Describe(job string) (notification, failedPing string) {
	if l, ok := n.LastNotification(job); ok {
		notification = l.String()
	}
	if l, ok := n.FailedPing(job); ok {
		failedPing = l.String()
	}
	return notification, failedPing
}
