package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// callFlowing is call for an answer that may be long, such as every
// status of a million jobs: c.Timeout bounds the wait for the answer to
// start and each wait for more of it, so that an answer that keeps
// coming is read to its end and one that stalls is given up.
func (c *Client) callFlowing(ctx context.Context, method, path string, out any) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stalled := time.AfterFunc(c.timeout(), cancel)
	defer stalled.Stop()
	resp, err := c.send(ctx, method, path, nil)
	if err != nil {
		return c.stallError(method, path, stalled, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= http.StatusMultipleChoices {
		return answerError(resp)
	}
	body := &flowing{r: resp.Body, stalled: stalled, d: c.timeout()}
	if err := json.NewDecoder(body).Decode(out); err != nil {
		return c.stallError(method, path, stalled, fmt.Errorf("cronvisor daemon at %s: %s %s: bad answer: %w", c.path, method, path, err))
	}
	return nil
}

// stallError is err, or when the stall timer fired, what stalled.
func (c *Client) stallError(method, path string, stalled *time.Timer, err error) error {
	if stalled.Stop() {
		return err
	}
	return fmt.Errorf("cronvisor daemon at %s: %s %s: nothing came for %s: %w", c.path, method, path, c.timeout(), context.DeadlineExceeded)
}

// flowing resets the stall timer whenever the answer brings more bytes.
type flowing struct {
	r       io.Reader
	stalled *time.Timer
	d       time.Duration
}

func (f *flowing) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n > 0 {
		f.stalled.Reset(f.d)
	}
	return n, err
}
