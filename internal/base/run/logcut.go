package run

import "fmt"

// LogCutOpen is the line a run's log holds after its head while its
// output past log_limit is kept in memory, until the run's end replaces
// it with the cut's marker and the tail. A keeper that takes over the
// log of a dead supervisor's run learns from it that the supervisor had
// cut the output already (its tail died with it), and where the head
// ends.
const LogCutOpen = "... [cronvisor: output past log_limit; its tail is written at the run's end] ...\n"

// LogCutMarker is the line that replaces the bytes a run's log cut
// between its head and its tail. atLeast: more were cut than counted
// (a dead supervisor's tail, lost with it).
func LogCutMarker(n int64, atLeast bool) string {
	if atLeast {
		return fmt.Sprintf("... [cronvisor: more than %d bytes cut] ...\n", n)
	}
	return fmt.Sprintf("... [cronvisor: %d bytes cut] ...\n", n)
}
