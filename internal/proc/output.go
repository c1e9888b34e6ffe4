package proc

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// maxLine is the longest line handed to OnOutput in one piece (and the most
// bytes in one call); longer lines are split so one runaway line cannot
// make the supervisor buffer without bound.
const maxLine = 64 << 10

// drainWindow is how long output may still arrive after the run's tree was
// ended. Only a process Run could not find (see the package doc) keeps the
// pipes open longer; its output is then abandoned rather than waited for.
const drainWindow = 100 * time.Millisecond

// output owns the run's stdout and stderr pipes and their readers. The pipes
// are our own rather than exec.Cmd's so that Run, not Cmd.Wait, decides when
// to stop reading.
type output struct {
	onOutput         func(stream, lines string)
	mu               sync.Mutex // serializes onOutput calls across both streams
	wg               sync.WaitGroup
	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File
	// beatR and beatW are the heartbeat pipe's ends (addBeats), nil
	// without one; its reader is not output's (see beats).
	beatR, beatW *os.File
}

// addBeats makes the run's heartbeat pipe, if hb asks for one, and
// gives cmd its write end as HeartbeatFD.
func (o *output) addBeats(cmd *exec.Cmd, hb *Heartbeat) error {
	if hb == nil {
		return nil
	}
	var err error
	if o.beatR, o.beatW, err = childPipe(); err != nil {
		return err
	}
	cmd.ExtraFiles = withHeartbeat(cmd.ExtraFiles, o.beatW)
	return nil
}

// readBeats starts reading the heartbeat pipe once the run started at
// start; nil without one.
func (o *output) readBeats(hb *Heartbeat, start time.Time) *beats {
	if hb == nil {
		return nil
	}
	return readBeats(o.beatR, hb.Timeout, start, hb.OnBeat)
}

// withHeartbeat is the run's ExtraFiles with w as HeartbeatFD: after the
// lock's fd 3, or a closed fd 3 when there is none, and before the
// resource slots' fds (see withSlots).
func withHeartbeat(extra []*os.File, w *os.File) []*os.File {
	files := make([]*os.File, max(len(extra), HeartbeatFD-2))
	copy(files, extra)
	files[HeartbeatFD-3] = w
	return files
}

func newOutput(onOutput func(stream, lines string)) (*output, error) {
	o := &output{onOutput: onOutput}
	var err error
	if o.stdoutR, o.stdoutW, err = childPipe(); err != nil {
		return nil, err
	}
	if o.stderrR, o.stderrW, err = childPipe(); err != nil {
		o.stdoutR.Close()
		o.stdoutW.Close()
		return nil, err
	}
	return o, nil
}

// childPipe returns a pipe whose read end is ours, in the runtime's poller
// (reads wait without a thread, and take deadlines), and whose write end,
// the child's, is a plain blocking descriptor. os.Pipe puts both ends in
// the poller and os/exec takes the child's end out of it again at the
// fork: five system calls per pipe for nothing.
func childPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	if err := unix.SetNonblock(p[0], true); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}

// start starts the readers, once closeChildEnds closed our copies of the
// write ends (the child has its own, so EOF comes when the run's last
// writer is gone).
func (o *output) start() {
	o.wg.Add(2)
	go o.read("stdout", o.stdoutR)
	go o.read("stderr", o.stderrR)
}

// closeChildEnds closes this process's copies of the write ends, once
// the child has its own.
func (o *output) closeChildEnds() {
	for _, f := range []**os.File{&o.stdoutW, &o.stderrW, &o.beatW} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}

// abort closes everything after a failed start.
func (o *output) abort() {
	for _, f := range []*os.File{o.stdoutR, o.stdoutW, o.stderrR, o.stderrW, o.beatR, o.beatW} {
		if f != nil {
			f.Close()
		}
	}
}

// finish waits up to drainWindow for both readers to reach EOF, then cuts
// them off, and returns once no onOutput call can happen any more.
func (o *output) finish() {
	done := make(chan struct{})
	go func() {
		o.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(drainWindow)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		// A deadline in the past makes pending and future reads fail at once.
		_ = o.stdoutR.SetReadDeadline(time.Now())
		_ = o.stderrR.SetReadDeadline(time.Now())
		<-done
	}
	o.stdoutR.Close()
	o.stderrR.Close()
}

// stop cuts the readers off at once, leaving what the pipes hold for
// whoever else reads them (the run's keeper), and returns once no
// onOutput call can happen any more.
func (o *output) stop() {
	_ = o.stdoutR.SetReadDeadline(time.Now())
	_ = o.stderrR.SetReadDeadline(time.Now())
	o.wg.Wait()
	o.stdoutR.Close()
	o.stderrR.Close()
}

// chunkBufs recycles the readers' 64 KiB buffers: a new pair per run
// was, at a high rate of runs, most of the daemon's garbage and GC work,
// for runs that mostly print nothing. A pool is process-wide by nature:
// it holds no state a caller could observe, only spare buffers.
var chunkBufs = sync.Pool{New: func() any { b := make([]byte, maxLine); return &b }}

// read hands over, after every read, all the whole lines read so far in
// one call: a job printing a million short lines costs a few hundred
// calls, not a million (each call is an event to every listener). A
// partial last line waits for its end, unless it fills the buffer (a line
// over maxLine, handed over in pieces) or the stream ended.
func (o *output) read(stream string, r *os.File) {
	defer o.wg.Done()
	bp := chunkBufs.Get().(*[]byte)
	defer chunkBufs.Put(bp)
	b, n := *bp, 0
	for {
		m, err := r.Read(b[n:])
		n += m
		end := bytes.LastIndexByte(b[:n], '\n') + 1
		if err != nil || (end == 0 && n == len(b)) {
			end = n // EOF (or cut off by finish), or a piece of a long line
		}
		if end > 0 {
			o.emit(stream, b[:end])
			n = copy(b, b[end:n])
		}
		if err != nil {
			return
		}
	}
}

// emit strips the line endings (LF or CRLF) and calls onOutput with the
// lines joined by LF. A chunk without a final newline is a piece of a
// long line or the unterminated last line.
func (o *output) emit(stream string, b []byte) {
	if o.onOutput == nil {
		return
	}
	text := string(b)
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	text = strings.TrimSuffix(text, "\n")
	o.mu.Lock()
	defer o.mu.Unlock()
	o.onOutput(stream, text)
}
