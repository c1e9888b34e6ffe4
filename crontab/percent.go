package crontab

import "strings"

// splitPercent applies cron's % rule to a command (cronie's do_command.c):
// the first % not escaped by a backslash ends the command, and what follows
// is the command's standard input, each further unescaped % a newline.
// "\%" is a literal % in both parts; other backslashes stay as written.
// hasInput is false when the line has no unescaped %.
func splitPercent(cmd string) (command, input string, hasInput bool) {
	var b strings.Builder
	i := 0
	for ; i < len(cmd); i++ {
		c := cmd[i]
		if c == '\\' && i+1 < len(cmd) && cmd[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if c == '%' {
			hasInput = true
			break
		}
		b.WriteByte(c)
	}
	command = b.String()
	if !hasInput {
		return command, "", false
	}
	var in strings.Builder
	for i++; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '\\' && i+1 < len(cmd) && cmd[i+1] == '%':
			in.WriteByte('%')
			i++
		case c == '%':
			in.WriteByte('\n')
		default:
			in.WriteByte(c)
		}
	}
	return command, in.String(), true
}

// withInput gives command its standard input as a here-document on a
// group around it, so that every command of a list reads it, as they all
// read cron's pipe. The here-document ends the input with a newline where
// cron's would have none; programs reading lines see the same text.
func withInput(command, input string) string {
	delim := "CRONVISOR_STDIN"
	for n := 2; strings.Contains("\n"+input+"\n", "\n"+delim+"\n"); n++ {
		delim = "CRONVISOR_STDIN" + itoa(n)
	}
	input = strings.TrimSuffix(input, "\n")
	return "{\n" + command + "\n} <<'" + delim + "'\n" + input + "\n" + delim
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
