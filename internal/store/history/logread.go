package history

import (
	"fmt"
	"io"
	"os"
	"strings"

	"cronvisor/internal/base/statedir"
)

// ReadLog returns the end of the saved log of job's run runID in stateDir:
// its last lines within limit bytes, and how many bytes before them were
// left out (a line cut by the limit is left out whole). A run without a
// log is an error wrapping fs.ErrNotExist; names that cannot be log files
// wrap ErrBadName.
func ReadLog(stateDir, job, runID string, limit int64) (lines []string, omitted int64, err error) {
	for _, n := range []string{job, runID} {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\x00") {
			return nil, 0, fmt.Errorf("%w: %q", ErrBadName, n)
		}
	}
	return TailFile(statedir.Dir(stateDir).RunLog(job, runID), limit)
}

// TailFile returns the last lines of the file at path within limit bytes
// and how many bytes before them were left out.
func TailFile(path string, limit int64) (lines []string, omitted int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	off := max(st.Size()-limit, 0)
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, 0, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, err
	}
	text := strings.TrimSuffix(string(b), "\n")
	if off > 0 { // the first line read is cut: drop it too
		i := strings.IndexByte(text, '\n')
		off += int64(i + 1)
		text = text[i+1:]
	}
	if text == "" {
		return nil, off, nil
	}
	return strings.Split(text, "\n"), off, nil
}

// OutputTail is the text of the last lines of the run log at path within
// limit bytes, without their stream tags, one line each: what a
// notification's output_tail says of a run whose output its observers
// did not see (a dead supervisor's, recorded by the next one). "" when
// there is no log.
func OutputTail(path string, limit int64) string {
	if path == "" {
		return ""
	}
	lines, _, err := TailFile(path, limit)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, l := range lines {
		_, text, ok := strings.Cut(l, entrySep)
		if !ok {
			text = l
		}
		b.WriteString(text)
		b.WriteByte('\n')
	}
	return b.String()
}
