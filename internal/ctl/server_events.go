package ctl

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"
)

// The server's side of GET /v1/events: each subscriber's stream of
// WireEvents, batched.

// events streams WireEvents as newline-delimited JSON until the client
// goes away, the backend closes the channel or the server shuts down.
// Events are coalesced: the first of a burst waits eventBatchWindow for
// the others, and the batch goes out in one write. Jobs fire on whole
// seconds, so this moves the stream's work (encoding, the write, the
// client's wake-up and redraw) out of the moment when the daemon is
// starting processes, and turns a burst of N starts into one write.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	ch, unsubscribe := s.b.Subscribe(r.Context())
	defer unsubscribe()
	st := newEventStream(w)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if st.rc.Flush() != nil { // the client learns at once that it is subscribed
		return
	}
	defer st.window.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.stop:
			// The daemon stops serving once its runs have ended: what
			// they emitted last (their run_finished) is already in ch
			// or the batch, and a console watching the drain wants it.
			for len(ch) > 0 && st.enc.Encode(<-ch) == nil {
				st.batched++
			}
			st.flush()
			return
		case ev, ok := <-ch:
			if !ok {
				st.flush()
				return
			}
			if !st.add(ev) {
				return
			}
		case <-st.window.C:
			if !st.send() {
				return
			}
		}
	}
}

// eventStream is one subscriber's batch. The batch is encoded into buf
// and written once: encoding straight into the response would write
// whenever its 4 KiB buffer filled, which a burst of 20 starts does, in
// the middle of the burst.
type eventStream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	buf     bytes.Buffer
	enc     *json.Encoder
	batched int
	window  *time.Timer // runs while a batch waits for the rest of its burst
}

func newEventStream(w http.ResponseWriter) *eventStream {
	st := &eventStream{w: w, rc: http.NewResponseController(w), window: time.NewTimer(eventBatchWindow)}
	st.window.Stop()
	st.enc = json.NewEncoder(&st.buf)
	return st
}

// add batches ev, starting the window at a batch's first event and
// sending a full batch; false means the client is gone.
func (st *eventStream) add(ev WireEvent) bool {
	if st.enc.Encode(ev) != nil {
		return false
	}
	if st.batched++; st.batched == 1 {
		st.window.Reset(eventBatchWindow)
	}
	return st.batched < maxEventBatch || st.send()
}

// flush sends what is batched, if anything.
func (st *eventStream) flush() {
	if st.batched > 0 {
		st.send()
	}
}

// send writes the batch; false means the client is gone. The write is
// bounded, then the bound lifted: an idle stream is fine, a client that
// stopped reading is not.
func (st *eventStream) send() bool {
	st.window.Stop()
	_ = st.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := st.w.Write(st.buf.Bytes()); err != nil || st.rc.Flush() != nil {
		return false
	}
	_ = st.rc.SetWriteDeadline(time.Time{})
	st.buf.Reset()
	st.batched = 0
	return true
}
