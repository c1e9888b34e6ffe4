package ctl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// JobStreamer is a Backend that gives every job's status a part at a
// time. GET /v1/jobs then writes the list as it is built: with a million
// jobs, the whole list and its encoding held at once were gigabytes.
type JobStreamer interface {
	// EachJobs calls yield with every job's status, in order, a part at
	// a time, and stops at yield's first error or when ctx ends. yield
	// must not keep the part: its slice may be reused for the next.
	EachJobs(ctx context.Context, yield func([]JobStatus) error) error
}

// streamJobs answers GET /v1/jobs from js with the bytes writeJSON would
// write for the whole list: "[", the elements joined by ",", "]\n". Once
// the first byte is out no error can be answered; a client that went
// away, or stopped reading for streamWriteTimeout, ends the stream.
func (s *server) streamJobs(w http.ResponseWriter, r *http.Request, js JobStreamer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	bw := bufio.NewWriterSize(w, 64<<10)
	// One encoder into one buffer, given pointers: a status boxed by
	// value, or a buffer per status, would be garbage for each job.
	var one bytes.Buffer
	enc := json.NewEncoder(&one)
	sep := byte('[')
	err := js.EachJobs(r.Context(), func(part []JobStatus) error {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		for i := range part {
			one.Reset()
			if err := enc.Encode(&part[i]); err != nil {
				return err
			}
			_ = bw.WriteByte(sep)
			if _, err := bw.Write(bytes.TrimSuffix(one.Bytes(), []byte("\n"))); err != nil {
				return err
			}
			sep = ','
		}
		// Each part goes out whole: the client bounds each wait for
		// more, not the whole answer.
		if err := bw.Flush(); err != nil {
			return err
		}
		return rc.Flush()
	})
	if err != nil {
		s.log.Debug("control socket: jobs list cut short", "err", err)
		return // the client sees a list that does not end
	}
	if sep == '[' {
		_ = bw.WriteByte('[')
	}
	_, _ = bw.WriteString("]\n")
	_ = bw.Flush()
	_ = rc.SetWriteDeadline(time.Time{})
}
